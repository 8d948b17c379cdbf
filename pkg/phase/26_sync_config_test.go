package phase

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

func TestFindDriftKeepsOnlySyncedFilesThatDiffer(t *testing.T) {
	k3s, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	p := k3s.Paths()
	file := func(path, content string) engine.File { return engine.File{Path: path, Content: []byte(content)} }
	chart := p.ManifestsDir + "/traefik-config.yaml"
	files := []engine.File{
		file(p.Config, "node-name: c1\n"),
		file(p.Registries, "mirrors: {}\n"),
		file(p.TokenFile, "new-token"),
		file(chart, "kind: HelmChartConfig\n"),
		file(p.KubeletConfig, "maxPods: 50\n"),
		file(p.AuditPolicy, "kind: Policy\n"),
	}
	have := map[string]string{
		p.Config:      sha256Hex([]byte("node-name: c1\n")), // current
		p.Registries:  sha256Hex([]byte("mirrors: {old: 1}\n")),
		p.TokenFile:   sha256Hex([]byte("old-token")), // differs, never synced
		p.AuditPolicy: "",                             // the node has none
		// chart and kubelet config: not hashed at all
	}
	d := findDrift(files, have, syncClassifier(k3s), nil)
	assert.Equal(t, []string{p.Registries, p.KubeletConfig, p.AuditPolicy}, strings.Split(filePaths(d.restart), ", "))
	assert.Equal(t, chart, filePaths(d.inPlace))

	for _, f := range files {
		have[f.Path] = sha256Hex(f.Content)
	}
	assert.True(t, findDrift(files, have, syncClassifier(k3s), nil).empty())
}

func TestSyncClassifier(t *testing.T) {
	rke2, _ := engine.For(v1alpha1.EngineRKE2)
	up, _ := engine.For(v1alpha1.EngineUpstream)
	rc, uc := syncClassifier(rke2), syncClassifier(up)
	cases := []struct {
		c    func(string) syncClass
		path string
		want syncClass
	}{
		{rc, "/etc/rancher/rke2/config.yaml", syncRestart},
		{rc, "/etc/rancher/rke2/registries.yaml", syncRestart},
		{rc, "/etc/rancher/rke2/pod-security.yaml", syncRestart},
		{rc, "/etc/rancher/rke2/token", syncNone},
		{rc, "/var/lib/rancher/rke2/server/manifests/rke2-cilium-config.yaml", syncInPlace},
		{rc, "/var/lib/rancher/rke2/server/manifests-other/x.yaml", syncNone},
		{uc, up.Paths().Config, syncNone}, // kubeadm reads it at init and join only
		{uc, "/etc/containerd/certs.d/docker.io/hosts.toml", syncInPlace},
		{uc, "/etc/containerd/config.toml", syncNone},
		{uc, up.Paths().KubeletConfig, syncNone},
		{uc, up.Paths().AuditPolicy, syncNone}, // a static pod's: a kubelet restart keeps it
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.c(c.path), c.path)
	}
}

// converge writes every host's rendered files, as Configure engine did
// when the cluster was installed, and forgets the report and calls.
func converge(t *testing.T, s *node.Fleet, runners map[string]*shRunner) {
	t.Helper()
	ctx := context.Background()
	r, err := s.RenderAll(ctx, s.Hosts)
	require.NoError(t, err)
	for h, files := range r {
		require.NoError(t, s.WriteRendered(ctx, h, "setup", files))
	}
	s.Report = &node.Report{}
	for _, r := range runners {
		r.Calls()
	}
}

func prepared(t *testing.T, p *SyncConfig, s *node.Fleet) *SyncConfig {
	t.Helper()
	require.NoError(t, prepare(context.Background(), p, s))
	return p
}

func TestSyncConfigLeavesAConvergedClusterAlone(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	converge(t, s, runners)
	assert.False(t, prepared(t, NewSyncConfigController(), s).ShouldRun())
	assert.False(t, prepared(t, NewSyncConfigWorker(), s).ShouldRun())
	for name, r := range runners {
		assert.Empty(t, r.Calls(), name)
	}
	assert.Empty(t, s.Report.Changes())
}

func TestSyncConfigRestartsADriftedWorkerAroundTheWrite(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	converge(t, s, runners)
	w1 := runners["w1"]
	w1.nodes = func() string { return nodesJSON(t, map[string]map[string]string{"c1": nil, "w1": nil}) }
	runners["c1"].nodes = w1.nodes
	s.Cluster.Spec.Config.Registries[0].Mirrors = []string{"https://other-mirror.example:5000"}
	registries := s.Engine.Paths().Registries

	ctrl := prepared(t, NewSyncConfigController(), s)
	p := prepared(t, NewSyncConfigWorker(), s)
	require.True(t, p.ShouldRun())
	plan, err := p.Plan(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []node.Change{{Host: "w1", What: "drain, stop, rewrite " + registries + ", start and uncordon (drifted)"}}, plan)

	require.True(t, ctrl.ShouldRun(), "the controller's registries drifted too")
	require.NoError(t, p.Run(context.Background()))
	assert.Contains(t, w1.read(t, registries), "other-mirror.example")

	// The write happens while the engine is stopped, through the leader's kubectl.
	kube := runners["c1"].Calls()
	local := w1.Calls()
	require.Len(t, kube, 4, "%q", kube)
	assert.Contains(t, kube[0], "cordon w1")
	assert.Contains(t, kube[1], "drain w1")
	assert.Contains(t, kube[2], "get nodes")
	assert.Contains(t, kube[3], "uncordon w1")
	stop := slices.IndexFunc(local, func(c string) bool { return strings.Contains(c, "stop") })
	write := slices.IndexFunc(local, func(c string) bool { return strings.HasPrefix(c, "write ") && strings.Contains(c, registries) })
	start := slices.IndexFunc(local, func(c string) bool { return strings.Contains(c, "start") })
	require.True(t, stop >= 0 && write > stop && start > write, "stop, write, start in that order: %q", local)
	assert.Len(t, slices.DeleteFunc(local, func(c string) bool { return !strings.HasPrefix(c, "write ") }), 1,
		"only the drifted file is written")

	var what []string
	for _, c := range s.Report.Changes() {
		what = append(what, c.Host+": "+c.What)
	}
	assert.Equal(t, []string{
		"w1: wrote " + registries + " (-rw-------)",
		"w1: restarted k3s-agent for its new config (drained, then uncordoned)",
	}, what)

	assert.False(t, prepared(t, NewSyncConfigWorker(), s).ShouldRun(), "a second run finds nothing to do")
}

func TestSyncConfigWritesChartValuesInPlace(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t)
	converge(t, s, runners)
	s.Distro.Spec.Config.Engine.Manifest["traefik"] = "replicas: 3\n"

	p := prepared(t, NewSyncConfigController(), s)
	require.True(t, p.ShouldRun())
	plan, err := p.Plan(context.Background())
	require.NoError(t, err)
	chart := s.Engine.Paths().ManifestsDir + "/traefik-config.yaml"
	assert.Equal(t, []node.Change{{Host: "c1", What: "rewrite " + chart + " in place (drifted chart values)"}}, plan)

	require.NoError(t, p.Run(context.Background()))
	calls := runners["c1"].Calls()
	require.Len(t, calls, 1, "one write, no kubectl and no systemctl: %q", calls)
	assert.Contains(t, calls[0], chart)
	assert.Contains(t, runners["c1"].read(t, chart), "replicas: 3")
}

func TestSyncConfigSyncsOnlyNodesThisRunLeftAsTheyWere(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1", "w2", "w3")
	converge(t, s, runners)
	s.Cluster.Spec.Config.Registries[0].Mirrors = []string{"https://other-mirror.example:5000"}
	s.Hosts[0].EngineRunning = false         // c1: not running before this run
	s.Hosts[1].Started = true                // w1: started or upgraded by this run
	s.Hosts[3].EngineVersion = "1.34.1+k3s1" // w3: an upgrade a dry run only planned

	assert.False(t, prepared(t, NewSyncConfigController(), s).ShouldRun())
	p := prepared(t, NewSyncConfigWorker(), s)
	assert.Equal(t, "w2", p.hosts().Names())
}

// A label or taint change drifts config.yaml only in node-label and
// node-taint, which the engine reads when the node registers: the file is
// rewritten to what a fresh node would get, and the node is not drained
// or restarted for it (phase 29 sets them through the API).
func TestSyncConfigRewritesALabelOnlyChangeWithoutARestart(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	converge(t, s, runners)
	w1 := runners["w1"]
	s.Hosts[1].Spec.Labels = map[string]string{"zone": "b"}
	s.Hosts[1].Spec.Taints = []string{"dedicated=edge:NoSchedule"}
	config := s.Engine.Paths().Config

	assert.False(t, prepared(t, NewSyncConfigController(), s).ShouldRun(), "the controller's labels did not change")
	p := prepared(t, NewSyncConfigWorker(), s)
	require.True(t, p.ShouldRun())
	plan, err := p.Plan(context.Background())
	require.NoError(t, err)
	require.Len(t, plan, 1)
	assert.Equal(t, "w1", plan[0].Host)
	assert.Contains(t, plan[0].What, "rewrite "+config+" in place, no restart")
	assert.NotContains(t, plan[0].What, "drain")

	require.NoError(t, p.Run(context.Background()))
	assert.Contains(t, w1.read(t, config), "zone=b")
	assert.Contains(t, w1.read(t, config), "dedicated=edge:NoSchedule")
	calls := w1.Calls()
	require.Len(t, calls, 1, "one write, no systemctl: %q", calls)
	assert.True(t, strings.HasPrefix(calls[0], "write ") && strings.Contains(calls[0], config), calls[0])
	assert.Empty(t, runners["c1"].Calls(), "no cordon, drain or uncordon")
	for _, c := range s.Report.Changes() {
		assert.NotContains(t, c.What, "restarted", "nothing was restarted")
	}
	assert.False(t, prepared(t, NewSyncConfigWorker(), s).ShouldRun(), "a second run finds nothing to do")
}

// A label change beside a change the engine reads at start restarts the
// node once, with both written.
func TestSyncConfigRestartsWhenMoreThanLabelsDrifted(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	converge(t, s, runners)
	runners["c1"].nodes = func() string { return nodesJSON(t, map[string]map[string]string{"c1": nil, "w1": nil}) }
	s.Hosts[1].Spec.Labels = map[string]string{"zone": "b"}
	s.Distro.Spec.Config.Engine.Config["kubelet-arg"] = []any{"max-pods=50"}
	config := s.Engine.Paths().Config

	p := prepared(t, NewSyncConfigWorker(), s)
	plan, err := p.Plan(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []node.Change{{Host: "w1", What: "drain, stop, rewrite " + config + ", start and uncordon (drifted)"}}, plan)
	require.NoError(t, p.Run(context.Background()))
	assert.Contains(t, runners["w1"].read(t, config), "max-pods=50")
	assert.Contains(t, runners["w1"].read(t, config), "zone=b")
}
