package container

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// netnsArg is the nspawn argument naming a host's namespace. Both the
// supervisor loop and systemd-nspawn carry it on their command lines, which
// is how a crashed run's processes are found without any state.
func netnsArg(netns string) string { return "--network-namespace-path=" + netnsDir + "/" + netns }

// fleetProcs returns the supervisor loops and nspawn processes of a fleet.
func fleetProcs(fleet string) []backend.Proc {
	needle := netnsArg(netnsPrefix(fleet))
	var out []backend.Proc
	for _, p := range backend.Procs() {
		for _, a := range p.Cmdline {
			if strings.HasPrefix(a, needle) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// procsInNetns returns processes living in any of the given network
// namespaces (named in /run/netns): the hosts' own processes, systemd and
// sshd included, which carry nothing on their command lines that names the
// fleet.
func procsInNetns(names []string) []int {
	type nsID struct{ dev, ino uint64 }
	want := map[nsID]bool{}
	for _, n := range names {
		var st syscall.Stat_t
		if syscall.Stat(netnsDir+"/"+n, &st) == nil {
			want[nsID{st.Dev, st.Ino}] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	var out []int
	for _, p := range backend.Procs() {
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+strconv.Itoa(p.PID)+"/ns/net", &st) == nil && want[nsID{st.Dev, st.Ino}] {
			out = append(out, p.PID)
		}
	}
	return out
}
