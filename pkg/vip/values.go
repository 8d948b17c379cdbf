package vip

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// interfaceName is what the cluster API accepts for an interface name
// (pkg/api/v1alpha1): discovered names reach here unchecked, so it is
// checked again before it goes into keepalived.conf.
var interfaceName = regexp.MustCompile(`^[a-zA-Z0-9_.:@-]{1,15}$`)

// checkValues refuses what would break keepalived.conf's syntax or weaken
// its source check: the interface must be a name, this controller's address
// and every peer an IP address of one family (keepalived skips a peer of
// the other family, and would never hear it).
func (k Keepalived) checkValues() error {
	bad := func(what, s string) error {
		return fmt.Errorf("%s: %s %q cannot go into keepalived.conf", k.Host, what, s)
	}
	if k.Cluster == "" || strings.ContainsAny(k.Cluster, " \t\r\n\"{}#!") {
		return bad("the cluster name", k.Cluster)
	}
	if !interfaceName.MatchString(k.Interface) {
		return bad("the interface", k.Interface)
	}
	src, err := netip.ParseAddr(k.Address)
	if err != nil || src.Zone() != "" {
		return bad("the private address", k.Address)
	}
	for _, p := range k.Peers {
		a, err := netip.ParseAddr(p)
		if err != nil || a.Zone() != "" || a.Is4() != src.Is4() {
			return bad("the peer address", p)
		}
	}
	return nil
}
