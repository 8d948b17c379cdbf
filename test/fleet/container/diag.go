package container

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// hostInitPID returns the PID (in this machine's namespace) of a host's
// systemd: the child of the host's systemd-nspawn.
func hostInitPID(fleet, host string) int {
	arg := netnsArg(netnsName(fleet, host))
	ps := backend.Procs()
	nspawn := 0
	for _, p := range ps {
		if p.Comm != "systemd-nspawn" {
			continue
		}
		for _, a := range p.Cmdline {
			if a == arg {
				nspawn = p.PID
			}
		}
	}
	if nspawn == 0 {
		return 0
	}
	for _, p := range ps {
		if p.PPID == nspawn {
			return p.PID
		}
	}
	return 0
}

// diagnoseHost asks a host's systemd what it is doing without SSH, by
// entering its namespaces: when sshd is not answering, this is the only way
// to see which job a boot or shutdown is stuck on.
func diagnoseHost(fleet, host string) string {
	pid := hostInitPID(fleet, host)
	if pid == 0 {
		return "no systemd running for " + host
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	for _, cmd := range [][]string{
		{"systemctl", "is-system-running"},
		{"systemctl", "list-jobs", "--no-pager"},
		// The units of running jobs are what a stuck boot or shutdown waits on.
		{"sh", "-c", "systemctl list-jobs --no-pager --no-legend | awk '$4 == \"running\" {print $2}' | xargs -r systemctl status --no-pager -n 15"},
		{"systemctl", "--failed", "--no-pager", "--no-legend"},
		{"journalctl", "-b", "-n", "30", "--no-pager"},
	} {
		args := append([]string{"-t", strconv.Itoa(pid), "-m", "-u", "-i", "-n", "-p", "--"}, cmd...)
		out, err := command(ctx, "nsenter", args...)
		fmt.Fprintf(&b, "$ %s\n%s\n", strings.Join(cmd, " "), out)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
	}
	return b.String()
}
