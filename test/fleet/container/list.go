package container

import (
	"context"
	"strings"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// List reports the fleets in the state dir, and fleets known only from
// leftovers (network namespaces named cs-<fleet>-<host>).
func (c *Container) List(ctx context.Context) ([]fleet.Status, error) {
	names, err := backend.FleetDirs(c.opts.StateDir)
	if err != nil {
		return nil, err
	}
	var out []fleet.Status
	seen := map[string]bool{}
	for _, name := range names {
		if fleet.ValidateName(name) != nil {
			continue
		}
		dir := c.fleetDir(name)
		st, err := backend.ReadState[fleetState](dir)
		if err != nil {
			if found := c.leftovers(ctx, name); len(found) > 0 {
				out = append(out, fleet.Status{Name: name, Backend: backendContainer, Dir: dir, Problems: append([]string{"no state file"}, found...)})
				seen[name] = true
			}
			continue
		}
		seen[st.Name] = true
		out = append(out, backend.Status(st.Name, backendContainer, dir, st.Hosts, func(host string) string { return pathsFor(dir, host).pid }))
	}
	orphans := map[string]bool{}
	for _, ns := range listNetns("cs-") {
		if parts := strings.SplitN(ns, "-", 3); len(parts) == 3 && !seen[parts[1]] {
			orphans[parts[1]] = true
		}
	}
	for name := range orphans {
		out = append(out, fleet.Status{Name: name, Backend: backendContainer, Dir: c.fleetDir(name),
			Problems: append([]string{"leftovers without state"}, c.leftovers(ctx, name)...)})
	}
	backend.SortByName(out)
	return out, nil
}

// Shell opens an interactive root shell on a host with OpenSSH, checking the
// host key against the fleet's known_hosts.
func (c *Container) Shell(ctx context.Context, name, host string) error {
	f, err := c.Get(ctx, name)
	if err != nil {
		return err
	}
	return backend.Shell(ctx, f, host)
}
