package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
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
