package podnet

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func route(dst, gw string) Route {
	return Route{Dst: netip.MustParsePrefix(dst), Gw: netip.MustParseAddr(gw)}
}

// From the control plane node's view of the captured cluster: a route to
// each worker that has a pod CIDR, none to itself, none yet to w3.
func TestDesiredRoutesFromNodeList(t *testing.T) {
	nodes, err := ParseNodeList(readTestdata(t, "nodelist.json"))
	require.NoError(t, err)
	assert.Equal(t, []Route{
		route("10.244.1.0/24", "192.0.2.11"),
		route("10.244.2.0/24", "192.0.2.12"),
	}, DesiredRoutes("cp1", nodes))
	assert.Equal(t, []Route{
		route("10.244.0.0/24", "192.0.2.10"),
		route("10.244.2.0/24", "192.0.2.12"),
	}, DesiredRoutes("w1", nodes))
}

func TestDesiredRoutesSkipsIncompleteAndDuplicateNodes(t *testing.T) {
	cidr := netip.MustParsePrefix("10.244.7.0/24")
	nodes := []Node{
		{Name: "z", PodCIDR: cidr, InternalIP: netip.MustParseAddr("192.0.2.9")},
		{Name: "y", PodCIDR: cidr, InternalIP: netip.MustParseAddr("192.0.2.8")},
		{Name: "no-ip", PodCIDR: netip.MustParsePrefix("10.244.8.0/24")},
		{Name: "no-cidr", InternalIP: netip.MustParseAddr("192.0.2.7")},
	}
	assert.Equal(t, []Route{route("10.244.7.0/24", "192.0.2.8")}, DesiredRoutes("self", nodes))
	assert.Empty(t, DesiredRoutes("self", nil))
}

func TestDiffRoutes(t *testing.T) {
	a := route("10.244.1.0/24", "192.0.2.11")
	b := route("10.244.2.0/24", "192.0.2.12")
	bMoved := route("10.244.2.0/24", "192.0.2.22")
	c := route("10.244.3.0/24", "192.0.2.13")
	for _, tc := range []struct {
		name             string
		desired, present []Route
		wantSet, wantDel []Route
	}{
		{name: "nothing"},
		{name: "first sync", desired: []Route{b, a}, wantSet: []Route{a, b}},
		{name: "in sync", desired: []Route{a, b}, present: []Route{b, a}},
		{name: "node left", desired: []Route{a}, present: []Route{a, b}, wantDel: []Route{b}},
		{name: "node moved: replaced, not deleted", desired: []Route{a, bMoved}, present: []Route{a, b}, wantSet: []Route{bMoved}},
		{name: "node joined while another left", desired: []Route{a, c}, present: []Route{b, a}, wantSet: []Route{c}, wantDel: []Route{b}},
		{name: "every node left", present: []Route{c, a}, wantDel: []Route{a, c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DiffRoutes(tc.desired, tc.present)
			assert.Equal(t, tc.wantSet, d.Set)
			assert.Equal(t, tc.wantDel, d.Del)
			assert.Equal(t, len(tc.wantSet) == 0 && len(tc.wantDel) == 0, d.Empty())
		})
	}
}
