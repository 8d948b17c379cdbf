package cluster

import (
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterNodes reads the cluster's nodes from inside the first controller.
func clusterNodes(t *testing.T, in *inspector, ctl string) map[string]node.Node {
	t.Helper()
	out := in.root(t, ctl, in.eng.Kubectl("get", "nodes", "-o", "json"))
	nodes, err := node.ParseNodes(out)
	require.NoError(t, err)
	m := map[string]node.Node{}
	for _, n := range nodes {
		m[n.Name] = n
	}
	return m
}

// firstController is the apply view's first controller.
func (w *world) firstController() string {
	for _, h := range w.views.Apply.Spec.Hosts {
		if h.IsController() {
			return h.Hostname
		}
	}
	return ""
}

// joinWalk adds the held-out host: the cluster must end one node larger,
// not one node different, with the new node at the version the cluster
// runs, every established node's firewall and /etc/hosts knowing it, and
// no engine work done on the established nodes.
func joinWalk(t *testing.T, w *world, in *inspector, pkg *testPackage) {
	ctl := w.firstController()
	before := clusterNodes(t, in, ctl)
	rep := runWhole(t, w, pkg.Path, w.allPath, false)
	after := clusterNodes(t, in, ctl)
	require.Len(t, after, len(before)+1, "one more node, not one different")
	for name := range before {
		assert.Contains(t, after, name, "established node %s is still there", name)
	}
	n, ok := after[w.views.Join]
	require.True(t, ok, "the join host %s is a node", w.views.Join)
	assert.True(t, n.Ready, "%s Ready", n.Name)
	assert.Contains(t, n.KubeletVersion, e2eutil.KubeVersion(pkg.Version), "%s runs the cluster's version, got %s", n.Name, n.KubeletVersion)

	joinAddr := ""
	for _, h := range w.views.All.Spec.Hosts {
		if h.Hostname == w.views.Join {
			joinAddr = h.PrivateAddress
		}
	}
	// Established nodes: only the address book and the firewall learn the
	// new node; nothing is uploaded to them and their engine is left alone.
	allowed := map[string]bool{"Updating hosts file for clusters nodes": true, "Updating hosts firewall": true}
	for _, c := range rep.Changes() {
		if c.Host == w.views.Join {
			continue
		}
		assert.True(t, allowed[c.Phase], "%s: the join changed an established node: [%s] %s", c.Host, c.Phase, c.What)
		assert.Zero(t, c.Bytes, "%s: bytes uploaded to an established node", c.Host)
	}
	var joined bool
	for _, c := range rep.Changes() {
		joined = joined || c.Host == w.views.Join && c.Phase == "Initialize Worker"
	}
	assert.True(t, joined, "the Initialize Worker phase claimed the new node")
	for _, h := range w.views.Apply.Spec.Hosts {
		assert.Contains(t, in.root(t, h.Hostname, "cat /etc/hosts"), joinAddr, "%s: /etc/hosts learns the new node", h.Hostname)
		assert.Contains(t, firewallDump(t, in, h.Hostname), joinAddr, "%s: the firewall trusts the new node", h.Hostname)
	}
}

// firewallDump is every front end's view of the host's rules, as text.
func firewallDump(t *testing.T, in *inspector, host string) string {
	t.Helper()
	out, _ := in.try(t, host, "nft list ruleset 2>/dev/null; firewall-cmd --ipset=k8s-nodes --get-entries 2>/dev/null; ufw status 2>/dev/null")
	return out
}

// upgradeWalk applies newer, a package at a newer engine version: every
// node ends at the new version, controllers upgraded before workers, each
// upgraded once.
func upgradeWalk(t *testing.T, w *world, in *inspector, newer *testPackage) {
	rep := runWhole(t, w, newer.Path, w.allPath, false)
	ctl := w.firstController()
	for name, n := range clusterNodes(t, in, ctl) {
		assert.Equal(t, newer.Built, n.KubeletVersion, "%s runs the new version", name)
		assert.True(t, n.Ready, "%s Ready", name)
		assert.False(t, n.Unschedulable, "%s uncordoned", name)
	}
	seen := map[string]int{}
	lastCtl, firstWorker := -1, -1
	for i, c := range rep.Ordered() {
		if !strings.HasPrefix(c.What, "upgraded ") {
			continue
		}
		seen[c.Host]++
		switch c.Phase {
		case "Upgrade Controller":
			lastCtl = i
		case "Upgrade Worker":
			if firstWorker < 0 {
				firstWorker = i
			}
		}
	}
	assert.Len(t, seen, countsFor(w.views.All).Hosts, "every node upgraded")
	for h, n := range seen {
		assert.Equal(t, 1, n, "%s upgraded once", h)
	}
	if firstWorker >= 0 {
		assert.Less(t, lastCtl, firstWorker, "every controller is upgraded before the first worker")
	}
}
