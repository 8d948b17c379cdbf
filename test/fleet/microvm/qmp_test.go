package microvm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBareQemu starts a real qemu with no machine at all, detached as a
// guest's is, and returns its QMP socket and pid: enough for the QMP
// commands, in a fraction of a second and without an image.
func startBareQemu(t *testing.T) (string, int) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Fatalf("qemu-system-x86_64: %v (hack/deps.sh installs qemu-system-x86)", err)
	}
	// a short dir: a unix socket path is limited to 108 bytes
	dir, err := os.MkdirTemp("", "qmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock, pidFile := filepath.Join(dir, "qmp.sock"), filepath.Join(dir, "pid")
	out, err := exec.Command("qemu-system-x86_64", "-machine", "none", "-nodefaults", "-display", "none",
		"-qmp", "unix:"+sock+",server=on,wait=off", "-pidfile", pidFile, "-daemonize").CombinedOutput()
	if err != nil {
		t.Fatalf("qemu: %v\n%s", err, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return sock, pid
}

func TestQMPPausesResumesAndQuitsARealQemu(t *testing.T) {
	sock, pid := startBareQemu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := dialQMP(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.close() }()
	want := func(status string) {
		t.Helper()
		got, err := q.status()
		if err != nil || got != status {
			t.Fatalf("status = %q, %v; want %q", got, err, status)
		}
	}
	want("running")
	if err := q.pause(); err != nil {
		t.Fatal(err)
	}
	want("paused")
	if err := q.resume(); err != nil {
		t.Fatal(err)
	}
	want("running")
	if err := q.reset(); err != nil {
		t.Fatal(err)
	}
	want("running")
	if _, err := q.execute("no-such-command"); err == nil || !strings.Contains(err.Error(), "CommandNotFound") {
		t.Errorf("an unknown command: %v, want qemu's CommandNotFound", err)
	}
	if err := q.quit(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("qemu %d still running 10 s after quit", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
