package podnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteProtocol marks the routes podnet installs (rtm_protocol; `ip route
// show proto 78` lists them). The kernel and routing daemons use values
// well away from it. Only routes with this mark are ever deleted, so the
// node's own routes and anyone else's are left alone.
const RouteProtocol netlink.RouteProtocol = 78

// Routes reads and writes podnet's routes in the main IPv4 table of the
// network namespace its netlink handle is bound to.
type Routes struct {
	h *netlink.Handle
}

// NewRoutes works through h: netlink.NewHandle() for the calling thread's
// namespace, netlink.NewHandleAt for another.
func NewRoutes(h *netlink.Handle) *Routes { return &Routes{h: h} }

// List is the routes present that podnet installed.
func (r *Routes) List() ([]Route, error) {
	filter := &netlink.Route{Protocol: RouteProtocol, Table: unix.RT_TABLE_MAIN}
	nl, err := r.h.RouteListFiltered(netlink.FAMILY_V4, filter, netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	routes := make([]Route, 0, len(nl))
	for _, x := range nl {
		if x.Dst == nil || x.Gw == nil {
			continue
		}
		dst, ok := prefixOf(x.Dst)
		gw, ok2 := netip.AddrFromSlice(x.Gw)
		if !ok || !ok2 {
			continue
		}
		routes = append(routes, Route{Dst: dst, Gw: gw.Unmap()})
	}
	return routes, nil
}

// Sync makes podnet's routes the desired ones and returns the changes it
// made. Each change is tried even if another fails; the error joins every
// failure (a gateway on no link of the namespace, say).
func (r *Routes) Sync(desired []Route) (RouteDiff, error) {
	present, err := r.List()
	if err != nil {
		return RouteDiff{}, err
	}
	todo := DiffRoutes(desired, present)
	var done RouteDiff
	var errs []error
	for _, x := range todo.Set {
		if err := r.h.RouteReplace(toNetlink(x)); err != nil {
			errs = append(errs, fmt.Errorf("set route %s: %w", x, err))
			continue
		}
		done.Set = append(done.Set, x)
	}
	for _, x := range todo.Del {
		if err := r.h.RouteDel(toNetlink(x)); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s: %w", x, err))
			continue
		}
		done.Del = append(done.Del, x)
	}
	return done, errors.Join(errs...)
}

// toNetlink is x as a netlink route marked as podnet's; the kernel picks
// the link from the gateway, which is on the shared segment.
func toNetlink(x Route) *netlink.Route {
	dst := x.Dst.Masked()
	return &netlink.Route{
		Dst:      &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())},
		Gw:       x.Gw.AsSlice(),
		Protocol: RouteProtocol,
		Table:    unix.RT_TABLE_MAIN,
		Scope:    netlink.SCOPE_UNIVERSE,
	}
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	ip, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	p := netip.PrefixFrom(ip.Unmap(), ones)
	return p, p.IsValid()
}
