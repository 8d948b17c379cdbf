package cluster

import (
	"testing"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertNodes checks the cluster from the first controller, with the
// engine's own kubectl: want nodes, each Ready at the package's version,
// with the address the inventory gives; controllers only when onlyCtl.
func assertNodes(t *testing.T, in *inspector, s *node.Fleet, want int, onlyCtl bool) {
	t.Helper()
	ctl := s.Hosts.Controllers()[0]
	out := in.root(t, ctl.Spec.Hostname, s.Engine.Kubectl("get", "nodes", "-o", "json"))
	nodes, err := node.ParseNodes(out)
	require.NoError(t, err)
	require.Len(t, nodes, want, "nodes in the cluster")
	byName := map[string]node.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, h := range s.Hosts {
		if onlyCtl && !h.IsController() {
			continue
		}
		n, ok := byName[h.NodeName()]
		if !assert.True(t, ok, "node %s is not in the cluster", h.NodeName()) {
			continue
		}
		assert.True(t, n.Ready, "%s Ready", n.Name)
		assert.Equal(t, h.Facts.PrivateAddress, n.InternalIP, "%s InternalIP is its privateAddress", n.Name)
		assert.Contains(t, n.KubeletVersion, "1.35", n.Name)
	}
}
