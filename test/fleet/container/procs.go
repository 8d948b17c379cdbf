package container

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a process found by scanning /proc.
type proc struct {
	PID, PPID int
	Comm      string
	Cmdline   []string
}

// listProcs scans /proc. Processes that vanish mid-scan are skipped.
func listProcs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// comm is in parentheses and may hold spaces or ')': parse from the last ')'.
		s := string(stat)
		l, r := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if l < 0 || r < l {
			continue
		}
		rest := strings.Fields(s[r+1:])
		if len(rest) < 2 || rest[0] == "Z" {
			continue // zombies are dead for our purposes
		}
		ppid, _ := strconv.Atoi(rest[1])
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		var args []string
		for _, a := range bytes.Split(bytes.TrimRight(cmd, "\x00"), []byte{0}) {
			args = append(args, string(a))
		}
		out = append(out, proc{PID: pid, PPID: ppid, Comm: s[l+1 : r], Cmdline: args})
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	r := strings.LastIndexByte(s, ')')
	return r < 0 || !strings.HasPrefix(strings.TrimSpace(s[r+1:]), "Z")
}

// netnsArg is the nspawn argument naming a host's namespace. Both the
// supervisor loop and systemd-nspawn carry it on their command lines, which
// is how a crashed run's processes are found without any state.
func netnsArg(netns string) string { return "--network-namespace-path=" + netnsDir + "/" + netns }

// fleetProcs returns the supervisor loops and nspawn processes of a fleet.
func fleetProcs(fleet string) []proc {
	needle := netnsArg(netnsPrefix(fleet))
	var out []proc
	for _, p := range listProcs() {
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
	for _, p := range listProcs() {
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+strconv.Itoa(p.PID)+"/ns/net", &st) == nil && want[nsID{st.Dev, st.Ino}] {
			out = append(out, p.PID)
		}
	}
	return out
}

// waitGone waits until none of pids is alive, up to d. It reports whether
// they all went.
func waitGone(pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := false
		for _, p := range pids {
			if alive(p) {
				left = true
				break
			}
		}
		if !left {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
