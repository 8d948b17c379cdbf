package microvm

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Get returns a fleet that is up.
func (p *Provider) Get(_ context.Context, name string) (*fleet.Fleet, error) {
	dir := p.fleetDir(name)
	st, err := backend.ReadState[vmState](dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("fleet %q is not up (microvm; no %s)", name, dir)
		}
		return nil, err
	}
	return fleetOf(dir, st), nil
}

// List reports the fleets in the state dir and each guest's qemu.
func (p *Provider) List(_ context.Context) ([]fleet.Status, error) {
	names, err := backend.FleetDirs(p.s.stateDir)
	if err != nil {
		return nil, err
	}
	var out []fleet.Status
	for _, name := range names {
		dir := p.fleetDir(name)
		st, err := backend.ReadState[vmState](dir)
		if err != nil {
			s := fleet.Status{Name: name, Backend: backendName, Dir: dir, Problems: []string{"no state file"}}
			for host, pid := range qemuPIDs(p.s.stateDir, name) {
				s.Hosts = append(s.Hosts, fleet.HostStatus{Host: fleet.Host{Name: host}, State: "running", PID: pid})
			}
			out = append(out, s)
			continue
		}
		out = append(out, backend.Status(name, backendName, dir, st.Hosts, func(host string) string { return pathsOf(dir, host).pid }))
	}
	backend.SortByName(out)
	return out, nil
}

// Shell opens an interactive root shell on a guest with OpenSSH, through
// its forwarded port, checking the host key against the fleet's
// known_hosts.
func (p *Provider) Shell(ctx context.Context, name, host string) error {
	f, err := p.Get(ctx, name)
	if err != nil {
		return err
	}
	return backend.Shell(ctx, f, host)
}
