package backend

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestProcsFindsThisProcess(t *testing.T) {
	for _, p := range Procs() {
		if p.PID == os.Getpid() {
			if p.PPID != os.Getppid() || len(p.Cmdline) == 0 {
				t.Errorf("this process: %+v, want ppid %d and its command line", p, os.Getppid())
			}
			return
		}
	}
	t.Fatalf("Procs has no pid %d (this process)", os.Getpid())
}

func TestAliveAndWaitGone(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not Alive")
	}
	if Alive(0) || Alive(-1) {
		t.Error("pid 0 or -1 is Alive")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if WaitGone([]int{pid}, 200*time.Millisecond) {
		t.Error("WaitGone says a running process went")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait() // reaped: a zombie would still be in /proc
	if !WaitGone([]int{pid}, 5*time.Second) {
		t.Errorf("WaitGone says killed pid %d is still there", pid)
	}
}

func TestReadPid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pid")
	if got := ReadPid(path); got != 0 {
		t.Errorf("ReadPid of no file = %d, want 0", got)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(42)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadPid(path); got != 42 {
		t.Errorf("ReadPid = %d, want 42", got)
	}
}
