package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestThreeControllers applies to three controllers and a worker: the
// first controller founds the cluster once, the other two join it one at a
// time through the founder, and a second apply changes nothing. After the
// upgrade, a reset takes the founder out (the next controller becomes the
// first server, the others are repointed to it) and an apply puts it back.
func TestThreeControllers(t *testing.T) {
	const name = "e2eha"
	of := newOwnFleet(t, name, fleet.Spec{Control: 3, Worker: 1}, 20*time.Minute, nil)
	w, f, distro := of.w, of.fleet, of.distro
	in := newInspector(t, w)
	pkg := buildTestPackage(t, distro, false) // this walk's own fleet, always the test package

	rep := runWhole(t, w, pkg.Path, w.applyPath, false)
	var founded, joined []string
	for _, ch := range rep.Ordered() {
		switch {
		case strings.HasSuffix(ch.What, "and found the cluster"):
			founded = append(founded, ch.Host)
		case strings.HasSuffix(ch.What, "and join as a controller"):
			joined = append(joined, ch.Host)
		}
	}
	assert.Equal(t, []string{"kc0"}, founded, "one founder")
	assert.ElementsMatch(t, []string{"kc1", "kc2"}, joined, "two controllers join")

	nodes := clusterNodes(t, in, "kc0")
	require.Len(t, nodes, 4)
	for n, node := range nodes {
		assert.True(t, node.Ready, "%s Ready", n)
	}
	founder := in.engineConfig(t, "kc0")
	assertFirstServer(t, in, founder, "kc0 founded the cluster")
	kc0, err := f.Host("kc0")
	require.NoError(t, err)
	for _, h := range []string{"kc1", "kc2"} {
		assert.Contains(t, in.engineConfig(t, h), fmt.Sprintf("server: https://%s:%d", kc0.Address, in.eng.JoinPort()), "%s joined through the founder, on the engine's join port", h)
	}

	again := runWhole(t, w, pkg.Path, w.applyPath, false)
	assert.Empty(t, again.Changes(), "a second apply on the converged cluster changes nothing")
	assert.Zero(t, again.BytesUploaded())

	// Upgrading three controllers: one at a time, each back Ready at the
	// new version before the next is drained (kubectl goes through another
	// controller meanwhile), all before the worker.
	newer := buildTestPackage(t, distro, true)
	up := runWhole(t, w, newer.Path, w.applyPath, false)
	var order []string
	for _, ch := range up.Ordered() {
		if strings.HasPrefix(ch.What, "upgraded ") {
			order = append(order, ch.Host)
		}
	}
	require.Len(t, order, 4, "every node upgraded once")
	assert.ElementsMatch(t, []string{"kc0", "kc1", "kc2"}, order[:3], "controllers first")
	assert.Equal(t, "kw0", order[3])
	for n, node := range clusterNodes(t, in, "kc1") {
		assert.Equal(t, distro.UpgradeBuilt, node.KubeletVersion, n)
		assert.True(t, node.Ready, "%s Ready", n)
		assert.False(t, node.Unschedulable, "%s uncordoned", n)
	}

	run(t, "reset refusals", func(t *testing.T) {
		expectResetRefusals(t, w, in, newer.Path, []resetRefusal{
			{name: "unknown target", targets: []string{"kc9"}, words: []string{`"kc9"`, "names no host"}, atLoad: true},
			{name: "two running controllers", targets: []string{"kc1", "kc2"}, words: []string{"kc1", "kc2", "one controller per run"}},
		})
	})
	if !run(t, "remove the founder", func(t *testing.T) { removeFounder(t, w, in, newer, "kc0", "kc1") }) {
		t.FailNow()
	}
	run(t, "add it back", func(t *testing.T) { addFounderBack(t, w, in, newer, "kc0", "kc1") })
}
