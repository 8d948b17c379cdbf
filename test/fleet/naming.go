package fleet

import (
	"fmt"
	"regexp"
)

// Host counts: every fleet's hosts share one /24, and host names stay short
// enough for the link names the container backend derives from them.
const (
	maxHosts   = 200 // .11 .. .210; leaves the top of the /24 free
	maxPerRole = 99  // keeps host names (kc99) short enough for veth names
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

// planHosts names the hosts of a spec: controllers, then workers, then
// infra workers, in that order; address gives the i-th host's address.
func planHosts(spec Spec, address func(i int) string) ([]Host, error) {
	if err := validateCounts(spec); err != nil {
		return nil, err
	}
	var hosts []Host
	add := func(prefix string, n int, role, profile string) {
		for i := 0; i < n; i++ {
			hosts = append(hosts, Host{
				Name:    fmt.Sprintf("%s%d", prefix, i),
				Address: address(len(hosts)),
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
