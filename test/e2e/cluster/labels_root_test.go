package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// The label and taint the labels walk gives one worker. The taint is
// PreferNoSchedule so the test engine's workloads stay where they are.
const (
	e2eLabel       = "cargoship.dev/e2e-zone"
	e2eTaintKey    = "cargoship.dev/e2e-dedicated"
	e2eTaintEffect = "PreferNoSchedule"
)

// labelsWalk changes one worker's labels and taints in the inventory and
// applies: the node carries them, set through the API, and its engine is
// never restarted for it (k3s and rke2 read node-label and node-taint only
// when a node registers, docs/reference/engines.md 3.4). The last apply is of the
// inventory as it was, so the walks after this one start from the cluster
// the apply walk left.
func labelsWalk(t *testing.T, w *world, in *inspector, pkg *testPackage) {
	ctl := w.firstController()
	worker := ""
	for _, h := range w.views.Apply.Spec.Hosts {
		if h.Role == v1alpha1.RoleWorker && worker == "" {
			worker = h.Hostname
		}
	}
	require.NotEmpty(t, worker, "the apply view has a worker")
	// The unit's main PID and when it last became active: a restart
	// changes both.
	engineProcess := func() string {
		return in.root(t, worker, "systemctl show -p MainPID -p ActiveEnterTimestampMonotonic "+in.eng.Service(false))
	}
	started := engineProcess()
	require.NotContains(t, started, "MainPID=0", "%s's engine runs", worker)
	config := in.engineConfig(t, worker)

	inventory := func(labels map[string]string, taints []string) string {
		c := cloneCluster(t, w.views.Apply)
		for i := range c.Spec.Hosts {
			if c.Spec.Hosts[i].Hostname == worker {
				c.Spec.Hosts[i].Labels, c.Spec.Hosts[i].Taints = labels, taints
			}
		}
		return writeInventory(t, c)
	}
	noRestart := func(t *testing.T, rep *reportView, why string) {
		t.Helper()
		for _, c := range rep.Changes() {
			assert.NotContains(t, c.What, "restarted", "%s: [%s] %s", why, c.Phase, c.What)
			assert.NotContains(t, c.What, "drain", "%s: [%s] %s", why, c.Phase, c.What)
		}
		assert.Equal(t, started, engineProcess(), "%s: %s's engine was not restarted", why, worker)
	}
	taintsOf := func(n node.Node) []string {
		var out []string
		for _, tt := range n.Taints {
			if strings.HasPrefix(tt.Key, "cargoship.dev/") {
				out = append(out, tt.String())
			}
		}
		return out
	}
	said := func(rep *reportView, phase, what string) bool {
		return slices.ContainsFunc(rep.Changes(), func(c node.Change) bool {
			return c.Host == worker && c.Phase == phase && strings.Contains(c.What, what)
		})
	}

	run(t, "dry run", func(t *testing.T) {
		rep := runWhole(t, w, pkg.Path, inventory(map[string]string{e2eLabel: "a"}, []string{e2eTaintKey + "=edge:" + e2eTaintEffect}), true)
		assert.True(t, said(rep, "Sync Registry Config Worker", "in place, no restart"), "the plan rewrites config.yaml without a restart")
		assert.True(t, said(rep, "Labeling nodes with their profile group", "label node "+worker+" "+e2eLabel+"=a"), "the plan names the label")
		assert.True(t, said(rep, "Labeling nodes with their profile group", "taint node "+worker+" "+e2eTaintKey+"=edge:"+e2eTaintEffect), "the plan names the taint")
		noRestart(t, rep, "a dry run")
		assert.NotContains(t, clusterNodes(t, in, ctl)[worker].Labels, e2eLabel, "a dry run labels nothing")
	})

	run(t, "added", func(t *testing.T) {
		rep := runWhole(t, w, pkg.Path, inventory(map[string]string{e2eLabel: "a"}, []string{e2eTaintKey + "=edge:" + e2eTaintEffect}), false)
		n := clusterNodes(t, in, ctl)[worker]
		assert.Equal(t, "a", n.Labels[e2eLabel])
		assert.Equal(t, []string{e2eTaintKey + "=edge:" + e2eTaintEffect}, taintsOf(n))
		assert.Equal(t, e2eLabel, n.Annotations["cargoship.colonel-byte.dev/labels"], "cargoship records what it manages")
		assert.True(t, said(rep, "Sync Registry Config Worker", "wrote "+in.eng.Paths().Config), "config.yaml matches what a fresh node would get")
		assert.Contains(t, in.engineConfig(t, worker), e2eLabel+"=a")
		noRestart(t, rep, "a label and a taint added")
	})

	run(t, "changed", func(t *testing.T) {
		rep := runWhole(t, w, pkg.Path, inventory(map[string]string{e2eLabel: "b"}, nil), false)
		n := clusterNodes(t, in, ctl)[worker]
		assert.Equal(t, "b", n.Labels[e2eLabel], "the label's new value, through the API")
		assert.Empty(t, taintsOf(n), "the taint the inventory dropped is removed")
		noRestart(t, rep, "a label changed, a taint dropped")
	})

	run(t, "restored", func(t *testing.T) {
		rep := runWhole(t, w, pkg.Path, w.applyPath, false)
		n := clusterNodes(t, in, ctl)[worker]
		assert.NotContains(t, n.Labels, e2eLabel, "the label cargoship set is removed")
		assert.NotContains(t, n.Annotations, "cargoship.colonel-byte.dev/labels")
		assert.Equal(t, config, in.engineConfig(t, worker), "config.yaml is as the apply walk wrote it")
		noRestart(t, rep, "the inventory as it was")
		for _, other := range clusterNodes(t, in, ctl) {
			assert.True(t, other.Ready, "%s Ready", other.Name)
		}
	})
}
