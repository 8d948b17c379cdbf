package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

func TestProfileLabelsSetsOnlyMissingOrWrongLabels(t *testing.T) {
	host := func(name, profile string) *node.Host {
		return &node.Host{Spec: &v1alpha1.Host{Hostname: name, Profile: profile}}
	}
	hosts := node.Hosts{host("c1", "controller"), host("w1", "infra"), host("w2", "worker"), host("w3", "worker"), host("w4", "")}
	nodes := []node.Node{
		{Name: "c1", Labels: map[string]string{"node-role.kubernetes.io/controller": "true"}},
		{Name: "w1", Labels: map[string]string{"node-role.kubernetes.io/infra": "false"}},
		{Name: "w2", Labels: map[string]string{"node-role.kubernetes.io/infra": "true"}},
		{Name: "w4"},
	}
	var got []string
	for _, l := range profileLabels(hosts, nodes) {
		got = append(got, l.describe("label"))
	}
	assert.Equal(t, []string{
		`label node w1 node-role.kubernetes.io/infra=true (was "false")`,
		`label node w2 node-role.kubernetes.io/worker=true`,
		`label node w3 node-role.kubernetes.io/worker=true once it joins`,
	}, got)
}

func TestLabelNodesLabelsThroughTheLeaderOnce(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	s.Options.LabelNodes = true
	c1 := runners["c1"]
	labels := map[string]map[string]string{
		"c1": {"node-role.kubernetes.io/controller": "true"},
		"w1": {"kubernetes.io/hostname": "w1"},
	}
	c1.nodes = func() string { return nodesJSON(t, labels) }
	ctx := context.Background()

	p := &LabelNodes{}
	require.NoError(t, prepare(ctx, p, s))
	plan, err := p.Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, []node.Change{{Host: "w1", What: "label node w1 node-role.kubernetes.io/worker=true"}}, plan)
	c1.Calls()

	require.NoError(t, p.Run(ctx))
	assert.Equal(t, []string{s.Engine.Kubectl("label", "node", "w1", "node-role.kubernetes.io/worker=true", "--overwrite")}, c1.Calls())
	assert.Equal(t, []node.Change{{Host: "w1", Phase: p.Title(), What: "labelled node w1 node-role.kubernetes.io/worker=true"}}, s.Report.Changes())

	labels["w1"]["node-role.kubernetes.io/worker"] = "true"
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "a second run labels nothing")
}

func TestLabelNodesNeedsEveryNodeJoined(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t, "w1")
	s.Options.LabelNodes = true
	runners["c1"].nodes = func() string { return nodesJSON(t, map[string]map[string]string{"c1": nil}) }
	ctx := context.Background()
	p := &LabelNodes{}
	require.ErrorContains(t, prepare(ctx, p, s), "node(s) w1 are not in the cluster")

	s.Options.DryRun = true
	require.NoError(t, prepare(ctx, p, s), "a dry run plans for nodes earlier phases would join")
	plan, err := p.Plan(ctx)
	require.NoError(t, err)
	assert.Contains(t, plan, node.Change{Host: "w1", What: "label node w1 node-role.kubernetes.io/worker=true once it joins"})

	s.Hosts[0].EngineRunning = false
	require.ErrorIs(t, prepare(ctx, p, s), ErrUnassessed)
	s.Options.LabelNodes = false
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "off")
}

// labelsTestState is k3sTestState with c1's kubectl a kubectlModel holding
// c1 and the workers, w1 registered with the labels and taint its
// inventory entry gives (as the engine registered it) beside a label and
// a taint someone else set.
func labelsTestState(t *testing.T) (*node.Fleet, *kubectlModel) {
	t.Helper()
	s, _ := k3sTestState(t, "w1", "w2")
	model := newKubectlModel("c1", "w1", "w2")
	s.Hosts[0].Conn = model.fake("c1")
	w1 := s.Hosts[1]
	w1.Spec.Labels = map[string]string{"zone": "a", "tier": "web"}
	w1.Spec.Taints = []string{"dedicated=edge:NoSchedule"}
	n := model.nodes["w1"]
	n.labels["zone"], n.labels["tier"], n.labels["team"] = "a", "web", "blue"
	n.taints = []engine.Taint{{Key: "dedicated", Value: "edge", Effect: "NoSchedule"}, {Key: "maintenance", Effect: "NoSchedule"}}
	return s, model
}

func planOf(t *testing.T, p *LabelNodes) []string {
	t.Helper()
	plan, err := p.Plan(context.Background())
	require.NoError(t, err)
	var out []string
	for _, c := range plan {
		out = append(out, c.Host+": "+c.What)
	}
	return out
}

// Phase 29 keeps each node's inventory labels and taints without
// --label-nodes: it records what it manages, sets what changed, removes
// what the inventory dropped, and never touches what others set.
func TestLabelNodesReconcilesInventoryLabelsAndTaints(t *testing.T) {
	t.Parallel()
	s, model := labelsTestState(t)
	ctx := context.Background()
	p := &LabelNodes{}

	// Right after the install: the node registered with them; cargoship
	// records that it manages them.
	require.NoError(t, prepare(ctx, p, s))
	assert.Equal(t, []string{
		"w1: annotate node w1 cargoship.colonel-byte.dev/labels=tier,zone (what cargoship manages)",
		"w1: annotate node w1 cargoship.colonel-byte.dev/taints=dedicated:NoSchedule (what cargoship manages)",
	}, planOf(t, p))
	require.NoError(t, p.Run(ctx))
	assert.Equal(t, [][]string{{"annotate", "node", "w1", "--overwrite",
		"cargoship.colonel-byte.dev/labels=tier,zone", "cargoship.colonel-byte.dev/taints=dedicated:NoSchedule"}}, model.takeCalls())
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "converged")

	// The inventory changes: a value, a label dropped and one added, the
	// taint replaced.
	s.Hosts[1].Spec.Labels = map[string]string{"zone": "b", "pool": "gpu"}
	s.Hosts[1].Spec.Taints = []string{"gpu=true:NoSchedule"}
	s.Options.DryRun = true
	require.NoError(t, prepare(ctx, p, s))
	assert.Equal(t, []string{
		"w1: label node w1 pool=gpu",
		`w1: label node w1 zone=b (was "a")`,
		"w1: remove label tier from node w1 (no longer in the inventory)",
		"w1: taint node w1 gpu=true:NoSchedule",
		"w1: remove taint dedicated=edge:NoSchedule from node w1 (no longer in the inventory)",
		"w1: annotate node w1 cargoship.colonel-byte.dev/labels=pool,zone (what cargoship manages)",
		"w1: annotate node w1 cargoship.colonel-byte.dev/taints=gpu:NoSchedule (what cargoship manages)",
	}, planOf(t, p), "a dry run names each label and taint change")
	assert.Empty(t, model.takeCalls(), "a dry run changes nothing")

	s.Options.DryRun = false
	require.NoError(t, prepare(ctx, p, s))
	require.NoError(t, p.Run(ctx))
	assert.Equal(t, [][]string{
		{"label", "node", "w1", "--overwrite", "pool=gpu", "zone=b", "tier-"},
		{"taint", "node", "w1", "--overwrite", "gpu=true:NoSchedule", "dedicated:NoSchedule-"},
		{"annotate", "node", "w1", "--overwrite", "cargoship.colonel-byte.dev/labels=pool,zone", "cargoship.colonel-byte.dev/taints=gpu:NoSchedule"},
	}, model.takeCalls())
	w1 := model.nodes["w1"]
	assert.Equal(t, map[string]string{"kubernetes.io/hostname": "w1", "zone": "b", "pool": "gpu", "team": "blue"}, w1.labels, "team, set by someone else, stays")
	assert.Equal(t, []engine.Taint{{Key: "maintenance", Effect: "NoSchedule"}, {Key: "gpu", Value: "true", Effect: "NoSchedule"}}, w1.taints)
	var reported []string
	for _, c := range s.Report.Changes() {
		reported = append(reported, c.What)
	}
	assert.Contains(t, reported, `labelled node w1 zone=b (was "a")`)
	assert.Contains(t, reported, "removed taint dedicated=edge:NoSchedule from node w1 (no longer in the inventory)")
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "a second run changes nothing")

	// The inventory drops them all: cargoship's go, and its annotations.
	s.Hosts[1].Spec.Labels, s.Hosts[1].Spec.Taints = nil, nil
	require.NoError(t, prepare(ctx, p, s))
	require.NoError(t, p.Run(ctx))
	assert.Equal(t, map[string]string{"kubernetes.io/hostname": "w1", "team": "blue"}, w1.labels)
	assert.Equal(t, []engine.Taint{{Key: "maintenance", Effect: "NoSchedule"}}, w1.taints)
	assert.Empty(t, w1.annotations)
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun())
	for _, name := range []string{"c1", "w2"} {
		assert.Equal(t, map[string]string{"kubernetes.io/hostname": name}, model.nodes[name].labels, "%s: no role label without --label-nodes", name)
	}
}

// A label someone else set is not cargoship's to remove, even under a key
// the inventory once gave another node.
func TestLabelNodesNeverRemovesWhatItDidNotSet(t *testing.T) {
	t.Parallel()
	s, model := labelsTestState(t)
	ctx := context.Background()
	s.Hosts[1].Spec.Labels, s.Hosts[1].Spec.Taints = nil, nil
	p := &LabelNodes{}
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "no annotation: nothing on the node is cargoship's")
	assert.Empty(t, model.takeCalls())
}

// A node that has not registered yet will register with its inventory
// labels and taints: nothing to do for it, and no error.
func TestLabelNodesLeavesNodesNotRegisteredYet(t *testing.T) {
	t.Parallel()
	s, model := labelsTestState(t)
	delete(model.nodes, "w1")
	p := &LabelNodes{}
	require.NoError(t, prepare(context.Background(), p, s))
	assert.False(t, p.ShouldRun())
}
