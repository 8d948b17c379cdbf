package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// upgradeAll prepares and runs phases 23 and 24.
func upgradeAll(t *testing.T, s *node.Fleet) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []*Upgrade{NewUpgradeControllers(), NewUpgradeWorkers()} {
		require.NoError(t, prepare(ctx, p, s), p.Title())
		require.True(t, p.ShouldRun(), p.Title())
		require.NoError(t, p.Run(ctx), p.Title())
	}
}

// kubeadm's upgrade, not a package swap (docs/reference/engines.md 7.1):
// the new kubeadm first, upgrade apply on the first controller and upgrade
// node on the others and the workers, each checked, then drained for the
// kubelet and kubectl and a kubelet restart; controllers before workers.
func TestKubeadmUpgradeRunsKubeadmsSequence(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.34.6", "1.35.3", 2, 1)
	ctx := context.Background()

	// Phase 18 installs a fresh host's packages before importing; on a
	// node that awaits its upgrade they stay queued for phase 23.
	for _, h := range s.Hosts {
		require.NoError(t, s.InstallPackages(ctx, h, "Import images"))
		assert.Len(t, h.Packages, 4, "%s: nothing installed before the upgrade", h)
	}
	assert.Empty(t, m.steps())

	ctrl := NewUpgradeControllers()
	require.NoError(t, prepare(ctx, ctrl, s))
	plan, err := ctrl.Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, []node.Change{
		{Host: "c1", What: "upgrade upstream v1.34.6 to 1.35.3: new kubeadm, kubeadm upgrade apply, drain, kubelet and kubectl, restart the kubelet, uncordon"},
		{Host: "c2", What: "upgrade upstream v1.34.6 to 1.35.3: new kubeadm, kubeadm upgrade node, drain, kubelet and kubectl, restart the kubelet, uncordon"},
	}, plan)

	upgradeAll(t, s)
	assert.Equal(t, []string{
		"c1: install kubeadm",
		"c1: kubeadm upgrade apply v1.35.3",
		"c1: control plane settled", // waited for before the next kubectl
		"c2: kubectl cordon c1",     // kubectl goes through the other controller
		"c2: kubectl drain c1",
		"c1: install kubelet kubectl cri-tools",
		"c1: systemctl daemon-reload",
		"c1: systemctl restart kubelet",
		"c1: control plane settled", // the new kubelet recreated it
		"c2: kubectl uncordon c1",

		"c2: install kubeadm",
		"c2: kubeadm upgrade node",
		"c2: control plane settled",
		"c1: kubectl cordon c2",
		"c1: kubectl drain c2",
		"c2: install kubelet kubectl cri-tools",
		"c2: systemctl daemon-reload",
		"c2: systemctl restart kubelet",
		"c2: control plane settled",
		"c1: kubectl uncordon c2",

		"w1: install kubeadm",
		"w1: kubeadm upgrade node",
		"c1: kubectl cordon w1",
		"c1: kubectl drain w1",
		"w1: install kubelet kubectl cri-tools",
		"w1: systemctl daemon-reload",
		"w1: systemctl restart kubelet",
		"c1: kubectl uncordon w1",
	}, m.steps())
	assert.Equal(t, map[string]string{"c1": "v1.35.3", "c2": "v1.35.3", "w1": "v1.35.3"}, m.kubelet)
	assert.Equal(t, map[string]string{"c1": "v1.35.3", "c2": "v1.35.3"}, m.manifests)
	var what []string
	for _, c := range s.Report.Changes() {
		if c.Host == "c1" {
			what = append(what, c.What)
		}
	}
	assert.Contains(t, what, "ran kubeadm upgrade apply v1.35.3")
	assert.Contains(t, what, "upgraded upstream v1.34.6 to 1.35.3")

	require.NoError(t, prepare(ctx, NewUpgradeControllers(), s))
	for _, p := range []*Upgrade{NewUpgradeControllers(), NewUpgradeWorkers()} {
		require.NoError(t, prepare(ctx, p, s))
		assert.False(t, p.ShouldRun(), "%s: a second run upgrades nothing", p.Title())
	}
}

// A controller whose control plane kubeadm did not move stops the upgrade
// before it is drained: the kubelet's version alone would not show it.
func TestKubeadmUpgradeChecksTheControlPlaneVersion(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.34.6", "1.35.3", 2, 0)
	// c1 reads as upgraded by an earlier run, but the cluster's
	// configuration never was: c2's upgrade node leaves it at 1.34.6.
	s.Hosts[0].EngineVersion, m.kubelet["c1"] = "v1.35.3", "v1.35.3"
	ctx := context.Background()
	p := NewUpgradeControllers()
	require.NoError(t, prepare(ctx, p, s))
	err := p.Run(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after kubeadm upgrade the control plane is not at v1.35.3: kube-apiserver at v1.34.6, kube-controller-manager at v1.34.6, kube-scheduler at v1.34.6")
	assert.Equal(t, []string{"c2: install kubeadm", "c2: kubeadm upgrade node"}, m.steps(), "not drained, no kubelet")
}

// A run after one that upgraded the first controller and stopped: the
// control plane is upgraded already, so the rest run upgrade node.
func TestKubeadmUpgradeAppliesOnce(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.34.6", "1.35.3", 2, 0)
	s.Hosts[0].EngineVersion, m.kubelet["c1"], m.manifests["c1"], m.cluster = "v1.35.3", "v1.35.3", "v1.35.3", "v1.35.3"
	s.Hosts[0].Packages = nil
	upgradeAll := func() {
		p := NewUpgradeControllers()
		require.NoError(t, prepare(context.Background(), p, s))
		require.NoError(t, p.Run(context.Background()))
	}
	upgradeAll()
	steps := m.steps()
	assert.Contains(t, steps, "c2: kubeadm upgrade node")
	assert.NotContains(t, steps, "c1: kubeadm upgrade apply v1.35.3")
	assert.Equal(t, "v1.35.3", m.manifests["c2"])
}

// Workers wait for every controller: a kubelet may not be newer than an
// API server.
func TestKubeadmWorkersWaitForEveryController(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.34.6", "1.35.3", 2, 1)
	s.Hosts[0].EngineVersion = "v1.35.3" // c1 done; c2 left at 1.34.6
	err := prepare(context.Background(), NewUpgradeWorkers(), s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "controller c2 runs upstream v1.34.6: kubeadm workers are upgraded after every controller")
	assert.Empty(t, m.steps())
}

// Skipping a minor version is refused while the facts are read, before
// any host changes, naming both versions.
func TestUpgradeSkippingAMinorVersionIsRefusedBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.33.3", "1.35.3", 1, 1)
	for _, f := range m.fakes {
		f.On("kubelet --version", "Kubernetes v1.33.3\n")
	}
	p := &DistroFacts{}
	Bind(p, s)
	err := p.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "upstream v1.33.3 to v1.35.3 skips minor version 1.34: upgrade one minor version at a time, with a 1.34 package first")
	for _, step := range m.steps() {
		assert.Contains(t, step, "systemctl is-active", "nothing ran but reads")
	}

	s, m = newKubeadmFleet(t, "1.34.6", "1.35.3", 1, 0)
	m.fakes["c1"].On("kubelet --version", "Kubernetes v1.34.6\n")
	Bind(p, s)
	require.NoError(t, p.Run(context.Background()), "one minor at a time is an upgrade")
}

// One controller: every kubectl goes through the API server the upgrade
// restarts. The kubelet recreates the control plane after kubeadm upgrade
// and again after its own restart, and a starting API server answers even
// the admin Forbidden (seen on real Kubernetes): the upgrade waits for its
// control plane to settle before it drains or uncordons through it.
func TestKubeadmUpgradeWaitsForItsOwnControlPlane(t *testing.T) {
	t.Parallel()
	s, m := newKubeadmFleet(t, "1.34.6", "1.35.3", 1, 1)
	upgradeAll(t, s)
	assert.Equal(t, []string{
		"c1: install kubeadm",
		"c1: kubeadm upgrade apply v1.35.3",
		"c1: control plane settled",
		"c1: kubectl cordon c1",
		"c1: kubectl drain c1",
		"c1: install kubelet kubectl cri-tools",
		"c1: systemctl daemon-reload",
		"c1: systemctl restart kubelet",
		"c1: control plane settled",
		"c1: kubectl uncordon c1",
	}, m.steps()[:10])
}
