package container

import (
	"fmt"
	"hash/fnv"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Addressing: every fleet gets its own /24 out of 10.78.0.0/16. The bridge
// (the hosts' gateway) is .1, hosts are .11 upwards in fleet order.
const (
	netPrefix     = "10.78"
	firstHostByte = 11
)

// fleetTag is a short form of the fleet name for interface names, which
// the kernel limits to 15 characters.
func fleetTag(name string) string {
	if len(name) <= 6 {
		return name
	}
	return fmt.Sprintf("%s%04x", name[:2], fnv32(name)&0xffff)
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// bridgeName is the fleet's bridge on this machine: csbr-<tag>, <= 11 chars.
func bridgeName(fleet string) string { return "csbr-" + fleetTag(fleet) }

// netnsName is a host's network namespace (/run/netns/<name>); it is also
// the nspawn machine name. Everything of a fleet shares the prefix
// cs-<fleet>-, which is how Down finds leftovers of a crashed run.
func netnsName(fleet, host string) string { return netnsPrefix(fleet) + host }

func netnsPrefix(fleet string) string { return "cs-" + fleet + "-" }

// vethName is the host-side end of a host's veth pair (the other end is
// eth0 inside the host): csv<tag>-<host>, <= 15 chars.
func vethName(fleet, host string) string { return vethPrefix(fleet) + host }

func vethPrefix(fleet string) string { return "csv" + fleetTag(fleet) + "-" }

// preferredOctet derives the third octet of a fleet's /24 from its name, so
// a fleet gets the same addresses every time unless something else holds
// them.
func preferredOctet(name string) int { return int(fnv32(name)%254) + 1 }

// chooseOctet returns the first octet at or after the preferred one that is
// not in use.
func chooseOctet(name string, used map[int]bool) (int, error) {
	start := preferredOctet(name)
	for i := 0; i < 254; i++ {
		o := (start-1+i)%254 + 1
		if !used[o] {
			return o, nil
		}
	}
	return 0, fmt.Errorf("fleet %q: every 10.78.X.0/24 is in use", name)
}

func subnetCIDR(octet int) string  { return fmt.Sprintf("%s.%d.0/24", netPrefix, octet) }
func gatewayAddr(octet int) string { return fmt.Sprintf("%s.%d.1", netPrefix, octet) }

// planHosts names and addresses the hosts of a spec (see fleet.PlanHosts),
// numbered from .11 of the fleet's /24 in fleet order.
func planHosts(spec fleet.Spec, octet int) ([]fleet.Host, error) {
	return fleet.PlanHosts(spec, func(i int) string {
		return fmt.Sprintf("%s.%d.%d", netPrefix, octet, firstHostByte+i)
	})
}
