package fleet

import (
	"fmt"
	"hash/fnv"
	"regexp"
)

// Addressing: every fleet gets its own /24 out of 10.78.0.0/16. The bridge
// (the hosts' gateway) is .1, hosts are .11 upwards in fleet order.
const (
	netPrefix     = "10.78"
	firstHostByte = 11
	maxHosts      = 200 // .11 .. .210; leaves the top of the /24 free
	maxPerRole    = 99  // keeps host names (kc99) short enough for veth names
)

var fleetNameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

// validateName rejects names that would not fit the link names derived from
// them, or that could be confused with another fleet's prefix: with no '-'
// in a name, "cs-dev-" can never match a host of fleet "dev-x".
func validateName(name string) error {
	if !fleetNameRE.MatchString(name) {
		return fmt.Errorf("fleet name %q: want a lower-case letter followed by up to 11 lower-case letters or digits (e.g. dev, e2e)", name)
	}
	return nil
}

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

// planHosts names and addresses the hosts of a spec: controllers, then
// workers, then infra workers, numbered from .11 in that order.
func planHosts(spec Spec, octet int) ([]Host, error) {
	if err := validateCounts(spec); err != nil {
		return nil, err
	}
	var hosts []Host
	add := func(prefix string, n int, role, profile string) {
		for i := 0; i < n; i++ {
			hosts = append(hosts, Host{
				Name:    fmt.Sprintf("%s%d", prefix, i),
				Address: fmt.Sprintf("%s.%d.%d", netPrefix, octet, firstHostByte+len(hosts)),
				Role:    role,
				Profile: profile,
			})
		}
	}
	add("kc", spec.Control, RoleController, RoleController)
	add("kw", spec.Worker, RoleWorker, RoleWorker)
	add("ki", spec.Infra, RoleWorker, ProfileInfra)
	return hosts, nil
}

func validateCounts(spec Spec) error {
	for _, c := range []struct {
		what string
		n    int
	}{{"control", spec.Control}, {"worker", spec.Worker}, {"infra", spec.Infra}} {
		if c.n < 0 || c.n > maxPerRole {
			return fmt.Errorf("fleet %q: %s count %d: want 0..%d", spec.Name, c.what, c.n, maxPerRole)
		}
	}
	n := spec.Control + spec.Worker + spec.Infra
	if n == 0 {
		return fmt.Errorf("fleet %q: no hosts asked for", spec.Name)
	}
	if n > maxHosts {
		return fmt.Errorf("fleet %q: %d hosts asked for; at most %d fit a fleet's /24", spec.Name, n, maxHosts)
	}
	return nil
}
