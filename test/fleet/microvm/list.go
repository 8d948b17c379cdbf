package microvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Get returns a fleet that is up.
func (p *Provider) Get(_ context.Context, name string) (*fleet.Fleet, error) {
	dir := p.fleetDir(name)
	st, err := readState(dir)
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
	entries, err := os.ReadDir(p.s.stateDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []fleet.Status
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := p.fleetDir(e.Name())
		s := fleet.Status{Name: e.Name(), Backend: backendName, Dir: dir}
		st, err := readState(dir)
		if err != nil {
			s.Problems = append(s.Problems, "no state file")
			for host, pid := range qemuPIDs(p.s.stateDir, e.Name()) {
				s.Hosts = append(s.Hosts, fleet.HostStatus{Host: fleet.Host{Name: host}, State: "running", PID: pid})
			}
			out = append(out, s)
			continue
		}
		for _, h := range st.Hosts {
			hs := fleet.HostStatus{Host: h, State: "stopped"}
			if pid := readPid(pathsOf(dir, h.Name).pid); alive(pid) {
				hs.State, hs.PID = "running", pid
			} else {
				s.Problems = append(s.Problems, h.Name+" is not running")
			}
			s.Hosts = append(s.Hosts, hs)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
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
	h, err := f.Host(host)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "ssh", fleet.SSHArgs(f, h, fleet.UserRoot)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != 255 {
			return nil // the shell's own exit status
		}
		return fmt.Errorf("%s: ssh: %w", host, err)
	}
	return nil
}
