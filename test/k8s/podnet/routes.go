package podnet

import (
	"cmp"
	"net/netip"
	"slices"
)

// Route is one host-gw route: another node's pod subnet via that node's
// address on the shared segment.
type Route struct {
	Dst netip.Prefix
	Gw  netip.Addr
}

func (r Route) String() string { return r.Dst.String() + " via " + r.Gw.String() }

// compareRoutes orders routes by destination, then gateway.
func compareRoutes(a, b Route) int {
	if c := a.Dst.Addr().Compare(b.Dst.Addr()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dst.Bits(), b.Dst.Bits()); c != 0 {
		return c
	}
	return a.Gw.Compare(b.Gw)
}

// DesiredRoutes is the route set for the node named self: one route per
// other node that has both an IPv4 pod CIDR and an IPv4 InternalIP, in
// destination order. A node without either is left out until it has them
// (it is still joining). Should two nodes claim one pod CIDR, the node
// first by name keeps it, so every node picks the same one.
func DesiredRoutes(self string, nodes []Node) []Route {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	seen := map[netip.Prefix]bool{}
	var routes []Route
	for _, n := range sorted {
		if n.Name == self || !n.PodCIDR.IsValid() || !n.InternalIP.IsValid() || seen[n.PodCIDR] {
			continue
		}
		seen[n.PodCIDR] = true
		routes = append(routes, Route{Dst: n.PodCIDR, Gw: n.InternalIP})
	}
	slices.SortFunc(routes, compareRoutes)
	return routes
}

// RouteDiff is what turns the routes present into the routes desired.
type RouteDiff struct {
	// Set are routes to add, or to replace a present route to the same
	// destination via another gateway.
	Set []Route
	// Del are present routes to a destination no longer desired (the
	// node left, or its pod CIDR changed).
	Del []Route
}

// Empty reports whether nothing needs doing.
func (d RouteDiff) Empty() bool { return len(d.Set) == 0 && len(d.Del) == 0 }

// DiffRoutes compares the desired routes with the present ones (podnet's
// own, as Routes.List reads them). A present route whose destination is
// desired via another gateway is replaced, not deleted, so the subnet is
// never left without a route; any other present route not desired is
// deleted.
func DiffRoutes(desired, present []Route) RouteDiff {
	want := map[netip.Prefix]netip.Addr{}
	for _, r := range desired {
		want[r.Dst] = r.Gw
	}
	have := map[Route]bool{}
	var d RouteDiff
	for _, r := range present {
		have[r] = true
		if _, ok := want[r.Dst]; !ok {
			d.Del = append(d.Del, r)
		}
	}
	for _, r := range desired {
		if !have[r] {
			d.Set = append(d.Set, r)
		}
	}
	slices.SortFunc(d.Set, compareRoutes)
	slices.SortFunc(d.Del, compareRoutes)
	return d
}
