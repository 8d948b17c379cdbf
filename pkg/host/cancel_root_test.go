package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// forgeShell is a login shell that, as a profile might, prints what
// ~/forge holds on stderr before it runs each command.
const forgeShell = `#!/bin/sh
if [ -r "$HOME/forge" ]; then cat "$HOME/forge" >&2; fi
exec /bin/sh "$@"
`

// forgeUser adds a NOPASSWD sudo user whose login shell is forgeShell and
// whose ~/forge holds forged; the test removes it again. It is this
// test's own user: the others' stderr stays clean.
func forgeUser(t *testing.T, f *fixture, forged string) string {
	t.Helper()
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	suffix := hex.EncodeToString(b[:])
	u := "cstest-forge-" + suffix
	shell := filepath.Join(f.dir, "forge-shell-"+suffix)
	if err := os.WriteFile(shell, []byte(forgeShell), 0o755); err != nil {
		t.Fatal(err)
	}
	// the comment lets a later run sweep the user up if this one dies
	if out, err := exec.Command("useradd", "-m", "-s", shell, "-c", userMark+strconv.Itoa(os.Getpid()), u).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", u, err, out)
	}
	t.Cleanup(func() { removeUser(u) }) // the sudoers file below too
	if out, err := exec.Command("usermod", "-p", "*", u).CombinedOutput(); err != nil {
		t.Fatalf("usermod %s: %v: %s", u, err, out)
	}
	rules := "/etc/sudoers.d/cargoship-test-" + suffix
	if err := os.WriteFile(rules, []byte(u+" ALL=(ALL) NOPASSWD: ALL\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join("/home", u)
	if err := os.WriteFile(filepath.Join(home, "forge"), []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	return u
}

// bystander starts a root sleep in a process group of its own (a session
// of its own with setsid) and returns its pid and a channel closed when
// it has exited; the test kills it at the end.
func bystander(t *testing.T, arg string, setsid bool) (int, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", arg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !setsid, Setsid: setsid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd.Process.Pid, exited
}

// stillAlive fails the test when the bystander has gone, giving a signal
// already sent a moment to land.
func stillAlive(t *testing.T, exited <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-exited:
		t.Errorf("%s was killed", what)
	case <-time.After(300 * time.Millisecond):
	}
}

// killLeft kills, by pid, what is left of a command the test expected
// to be gone, so a failing run leaves no root sleep behind.
func killLeft(cmdline string) {
	out, _ := exec.Command("pgrep", "-x", "-f", cmdline).Output()
	for _, p := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(p); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestCancelIgnoresAForgedMark: a login shell prints pid lines naming a
// root process of another group, in the old format and with a nonce of
// its own, before cargoship's. Cancelling a root command must stop that
// command and leave the other process alone (it used to get the root
// kill -TERM meant for the command's group).
func TestCancelIgnoresAForgedMark(t *testing.T) {
	f := sshd(t)
	pid, exited := bystander(t, "4301", false)
	forged := fmt.Sprintf("%s%d\n%s%s:%d\n", pgidMark, pid, pgidMark, rand.Text(), pid)
	u := forgeUser(t, f, forged)
	for i, mode := range []string{"ssh", "openSSH"} {
		t.Run(mode, func(t *testing.T) {
			h := f.sshHost(u)
			if mode == "openSSH" {
				h = f.openSSHHost(u)
			}
			c := connect(t, h, f.opts(nil, nil))
			cmd := "sleep " + strconv.Itoa(4311+i)
			t.Cleanup(func() { killLeft(cmd) })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := c.Sudo(ctx, cmd+"; echo never"); done <- err }()
			waitFor(t, func() bool { return running(cmd) }, cmd+" to start")
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v; want context.Canceled", err)
			}
			// the kill is done when Sudo returns
			stillAlive(t, exited, "the process the forged lines named")
			waitFor(t, func() bool { return !running(cmd) }, cmd+" to be killed")
			// the forged lines reach the command's stderr like any output
			_, err := c.Run(context.Background(), "echo real >&2; exit 1")
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Stderr != strings.TrimSpace(forged)+"\nreal" {
				t.Errorf("err = %v; want the forged lines, then real", err)
			}
		})
	}
}

// TestKillGroupLeavesOtherSessions: handed the group of a process that
// is not in a command's session, killGroup kills nothing, even as root.
// Over ssh a command's shell leads a session of its own; a local
// command's group is in cargoship's session.
func TestKillGroupLeavesOtherSessions(t *testing.T) {
	f := sshd(t)
	grouped, groupedGone := bystander(t, "4321", false)
	session, sessionGone := bystander(t, "4322", true)
	for _, tc := range []struct {
		mode   string
		c      *Conn
		pid    int
		exited <-chan struct{}
	}{
		{"ssh", connect(t, f.sshHost(userNoPW), f.opts(nil, nil)), grouped, groupedGone},
		{"openSSH", connect(t, f.openSSHHost(userNoPW), f.opts(nil, nil)), grouped, groupedGone},
		{"localhost", connect(t, localHost(), f.opts(nil, nil)), session, sessionGone},
	} {
		tc.c.killGroup(context.Background(), tc.pid, true)
		stillAlive(t, tc.exited, fmt.Sprintf("%s: group %d", tc.mode, tc.pid))
	}
}
