package microvm

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readPid reads a qemu pid file; 0 when there is none.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// alive reports whether pid runs and is not a zombie.
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

// qemuPIDs are the running qemu processes of a fleet of stateDir, found by the -name
// each guest is started with, so a fleet whose state is gone is still
// found. It maps the host name to the pid.
func qemuPIDs(stateDir, fleetName string) map[string]int {
	prefix := guestName(stateDir, fleetName, "")
	out := map[string]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmd, "\x00"), []byte{0})
		if len(args) == 0 || !bytes.HasSuffix(args[0], []byte("qemu-system-x86_64")) {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if string(args[i]) == "-name" && strings.HasPrefix(string(args[i+1]), prefix) {
				out[strings.TrimPrefix(string(args[i+1]), prefix)] = pid
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
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		left := false
		for _, p := range pids {
			left = left || alive(p)
		}
		if !left {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
