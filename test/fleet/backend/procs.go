package backend

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// Proc is a process found by scanning /proc.
type Proc struct {
	PID, PPID int
	Comm      string
	Cmdline   []string
}

// Procs scans /proc. Processes that vanish mid-scan are skipped, and so
// are zombies: they are dead for a backend's purposes.
func Procs() []Proc {
	entries, _ := os.ReadDir("/proc")
	var out []Proc
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
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		var args []string
		for _, a := range bytes.Split(bytes.TrimRight(cmd, "\x00"), []byte{0}) {
			args = append(args, string(a))
		}
		out = append(out, Proc{PID: pid, PPID: ppid, Comm: s[l+1 : r], Cmdline: args})
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
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

// ReadPid reads a pid file; 0 when there is none.
func ReadPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// WaitGone waits until none of pids is alive, up to d. It reports whether
// they all went.
func WaitGone(pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := false
		for _, p := range pids {
			if Alive(p) {
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
