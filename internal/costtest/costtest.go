// Package costtest measures what one piece of work costs by running it in
// a child process (the test binary run again): its time and peak memory
// are its own, and work that would run for minutes is killed at a bound
// instead of waited for. The tests that bound what crafted documents and
// packages may cost use it.
package costtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RunChild runs the test binary again with env=value set and no tests
// selected (the caller's TestMain sees env and does the work, ending with
// PrintPeakRSS), and returns what it printed before the memory line, the
// CPU time it used and its peak resident memory in bytes. limit bounds
// the CPU time, which a busy machine does not inflate as it does the wall
// time; the child is killed after wallFactor times limit of wall time, so
// work that would run for minutes is not waited for.
func RunChild(t *testing.T, env, value string, limit time.Duration) (string, time.Duration, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wallFactor*limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("still running after %v of wall time; killed", wallFactor*limit)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if cpu > limit {
		t.Fatalf("used %v of CPU time, more than %v", cpu.Round(time.Millisecond), limit)
	}
	text, rss := splitPeakRSS(t, string(out))
	return text, cpu, rss
}

// wallFactor is how much longer than its CPU bound a child may take on the
// clock: a loaded machine (CI's two cores running other suites) shares
// them, and the bound is on the work, not the machine.
const wallFactor = 4

// PrintPeakRSS ends a child's output with its peak resident memory, read
// from /proc: the rusage a parent gets counts the parent's own memory too,
// which the child inherits until it execs.
func PrintPeakRSS() {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println("peak-rss-unknown")
		return
	}
	for _, l := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Println("peak-rss-kib " + strings.TrimSpace(strings.TrimSuffix(kb, "kB")))
			return
		}
	}
	fmt.Println("peak-rss-unknown")
}

// splitPeakRSS takes the last line PrintPeakRSS wrote off a child's output.
func splitPeakRSS(t *testing.T, out string) (string, int64) {
	t.Helper()
	body, last, _ := strings.Cut(strings.TrimSuffix(out, "\n"), "peak-rss-kib ")
	kib, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
	if err != nil {
		t.Fatalf("the child did not report its peak memory:\n%s", out)
	}
	return body, kib << 10
}
