package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// List reports the fleets in the state dir, and fleets known only from
// leftovers (network namespaces named cs-<fleet>-<host>).
func (c *Container) List(ctx context.Context) ([]fleet.Status, error) {
	var out []fleet.Status
	seen := map[string]bool{}
	entries, err := os.ReadDir(c.opts.StateDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || fleet.ValidateName(e.Name()) != nil {
			continue
		}
		dir := c.fleetDir(e.Name())
		st, err := readState(dir)
		if err != nil {
			if found := c.leftovers(ctx, e.Name()); len(found) > 0 {
				out = append(out, fleet.Status{Name: e.Name(), Backend: backendContainer, Dir: dir, Problems: append([]string{"no state file"}, found...)})
				seen[e.Name()] = true
			}
			continue
		}
		seen[st.Name] = true
		s := fleet.Status{Name: st.Name, Backend: backendContainer, Dir: dir}
		for _, h := range st.Hosts {
			hs := fleet.HostStatus{Host: h, State: "stopped"}
			if pid := readPid(pathsFor(dir, h.Name).pid); alive(pid) {
				hs.State, hs.PID = "running", pid
			} else {
				s.Problems = append(s.Problems, h.Name+" is not running")
			}
			s.Hosts = append(s.Hosts, hs)
		}
		out = append(out, s)
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
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Shell opens an interactive root shell on a host with OpenSSH, checking the
// host key against the fleet's known_hosts.
func (c *Container) Shell(ctx context.Context, name, host string) error {
	f, err := c.Get(ctx, name)
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
			return nil // the shell's own exit status: not a harness failure
		}
		return fmt.Errorf("%s: ssh: %w", host, err)
	}
	return nil
}
