package microvm

import (
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// qemuPIDs are the running qemu processes of a fleet of stateDir, found by the -name
// each guest is started with, so a fleet whose state is gone is still
// found. It maps the host name to the pid.
func qemuPIDs(stateDir, fleetName string) map[string]int {
	prefix := guestName(stateDir, fleetName, "")
	out := map[string]int{}
	for _, p := range backend.Procs() {
		args := p.Cmdline
		if len(args) == 0 || !strings.HasSuffix(args[0], "qemu-system-x86_64") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-name" && strings.HasPrefix(args[i+1], prefix) {
				out[strings.TrimPrefix(args[i+1], prefix)] = p.PID
			}
		}
	}
	return out
}

// stop ends the processes: SIGTERM (qemu exits at once, as a machine whose
// power is cut), then SIGKILL for any still there after grace.
func stop(pids []int, grace time.Duration) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	if backend.WaitGone(pids, grace) {
		return
	}
	for _, p := range pids {
		if backend.Alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
