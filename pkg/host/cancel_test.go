package host

// Tests of how a cancelled command's process group is found and killed:
// no sshd, no root.

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sniff feeds stderr to a fresh sniffer in the given writes.
func sniff(writes ...string) (*pgidSniffer, string) {
	var out bytes.Buffer
	p := newPGIDSniffer(&out)
	for _, s := range writes {
		_, _ = p.Write([]byte(s))
	}
	p.flush()
	return p, out.String()
}

func TestPGIDSnifferTakesTheWrappersLine(t *testing.T) {
	var out bytes.Buffer
	p := newPGIDSniffer(&out)
	mark := string(p.mark)
	// the mark may arrive split across writes, after other lines
	for _, s := range []string{"warn: x\n" + mark[:5], mark[5:] + "4242\nreal ", "stderr\n"} {
		_, _ = p.Write([]byte(s))
	}
	p.flush()
	if p.pgid() != 4242 || out.String() != "warn: x\nreal stderr\n" {
		t.Errorf("pgid %d, passed on %q", p.pgid(), out.String())
	}
	if p, got := sniff("no newline at all"); p.pgid() != 0 || got != "no newline at all" {
		t.Errorf("pgid %d, passed on %q", p.pgid(), got)
	}
	// what the wrapper prints is what the sniffer takes: the shell's pid
	var errs bytes.Buffer
	w := newPGIDSniffer(&errs)
	cmd := exec.Command("sh", "-c", w.wrap("echo $$; echo rest >&2"))
	cmd.Stderr = w
	pid, err := cmd.Output()
	w.flush()
	if err != nil || strconv.Itoa(w.pgid())+"\n" != string(pid) || errs.String() != "rest\n" {
		t.Errorf("sh printed pid %q, sniffer took %d and passed on %q (%v)", pid, w.pgid(), errs.String(), err)
	}
}

// TestPGIDSnifferIgnoresForgedMarks: a login shell's profile or the
// command prints on the same stderr, and what it prints there must not
// name the group a root kill goes to.
func TestPGIDSnifferIgnoresForgedMarks(t *testing.T) {
	p := newPGIDSniffer(nil)
	ours := string(p.mark)
	other := string(newPGIDSniffer(nil).mark)
	for _, tc := range []struct {
		name   string
		stderr string
		want   int
	}{
		{"the old format, before ours", "cargoship-pgid:1\ncargoship-pgid:777\n" + ours + "4242\n", 4242},
		{"another nonce, before ours", other + "1\n" + other + "777\n" + ours + "4242\n", 4242},
		{"a second line with our nonce", ours + "4242\n" + ours + "1\n", 4242},
		{"the command, after ours", ours + "4242\nprint " + ours + "777\n", 4242},
		{"ours, then nothing", ours + "4242", 0},
		{"ours inside a line", "x" + ours + "777\n" + ours + "4242\n", 4242},
		{"group 1: every process", ours + "1\n" + ours + "4242\n", 0},
		{"group 0", ours + "0\n", 0},
		{"group -1", ours + "-1\n", 0},
		{"a sign", ours + "+4242\n", 0},
		{"a leading zero", ours + "04242\n", 0},
		{"a space", ours + "4242 \n", 0},
		{"a carriage return", ours + "4242\r\n", 0},
		{"beyond a pid", ours + "4294967297\n", 0},
		{"hex", ours + "0x10\n", 0},
		{"empty", ours + "\n", 0},
		{"only forged ones", "cargoship-pgid:777\n" + other + "777\n", 0},
	} {
		var out bytes.Buffer
		s := &pgidSniffer{w: &out, mark: p.mark}
		_, _ = s.Write([]byte(tc.stderr))
		s.flush()
		if s.pgid() != tc.want {
			t.Errorf("%s: pgid %d, want %d", tc.name, s.pgid(), tc.want)
		}
		// a forged line is the command's output like any other
		if want := strings.Replace(tc.stderr, ours+"4242\n", "", 1); tc.want == 4242 && out.String() != want {
			t.Errorf("%s: passed on %q, want %q", tc.name, out.String(), want)
		}
		if tc.want == 0 && strings.HasPrefix(tc.name, "only") && out.String() != tc.stderr {
			t.Errorf("%s: passed on %q, want all of it", tc.name, out.String())
		}
	}
	if string(p.mark) == other {
		t.Error("two commands drew one nonce")
	}
}

// TestCommandSession: over ssh a command's group is a session of its
// own; a local one shares cargoship's session but never its group; no
// command has group 1 or below.
func TestCommandSession(t *testing.T) {
	remote, local := &Conn{t: &sshTransport{}}, &Conn{t: localTransport{}}
	for _, c := range []*Conn{remote, local} {
		for _, pgid := range []int{-1, 0, 1} {
			if sid, ok := c.commandSession(pgid); ok {
				t.Errorf("%T: group %d accepted, session %d", c.t, pgid, sid)
			}
		}
	}
	if sid, ok := remote.commandSession(4242); !ok || sid != 4242 {
		t.Errorf("ssh: session %d, %v; want 4242", sid, ok)
	}
	if _, ok := local.commandSession(unix.Getpgrp()); ok {
		t.Error("local: cargoship's own group accepted")
	}
	want, _ := unix.Getsid(0)
	if sid, ok := local.commandSession(4242); !ok || sid != want {
		t.Errorf("local: session %d, %v; want %d", sid, ok, want)
	}
}

// TestKillScriptChecksTheSession runs the kill script here against a
// sleep in a session of its own: named with another session it stays,
// named with its own it goes.
func TestKillScriptChecksTheSession(t *testing.T) {
	victim := exec.Command("sleep", "600")
	victim.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = victim.Wait(); close(exited) }()
	t.Cleanup(func() { _ = victim.Process.Kill(); <-exited })
	pid := victim.Process.Pid
	sid, _ := unix.Getsid(0)
	for _, s := range []int{sid, pid + 1} {
		if out, err := exec.Command("sh", "-c", killLine(pid, s, time.Second, 10*time.Millisecond)).CombinedOutput(); err != nil {
			t.Fatalf("kill script: %v: %s", err, out)
		}
		select {
		case <-exited:
			t.Fatalf("group %d killed as one of session %d", pid, s)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if out, err := exec.Command("sh", "-c", killLine(pid, pid, time.Second, 10*time.Millisecond)).CombinedOutput(); err != nil {
		t.Fatalf("kill script: %v: %s", err, out)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the group of its own session was not killed")
	}
}

// fakeKill runs killScript with a kill that only reports what it was
// asked to do.
func fakeKill(t *testing.T, g, s string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", "kill() { echo kill \"$*\"; }\n"+killScript, "sh", g, s, "1", "0.01")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("group %q, session %q: %v: %s", g, s, err, out)
	}
	return string(out)
}

// TestKillScriptNeverSignalsGroupOne: the script itself refuses group 1
// and below whatever session it is told. kill only reports here, so a
// failure signals nothing.
func TestKillScriptNeverSignalsGroupOne(t *testing.T) {
	for _, g := range []string{"1", "0", "-1", "", "1 1", "01"} {
		for _, s := range []string{"1", "0", g} {
			if out := fakeKill(t, g, s); out != "" {
				t.Errorf("group %q, session %q: %s", g, s, out)
			}
		}
	}
	// the fake is the kill the script calls: a group of its own session
	// gets its TERM
	victim := exec.Command("sleep", "600")
	victim.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	g := strconv.Itoa(victim.Process.Pid)
	if out := fakeKill(t, g, g); !strings.HasPrefix(out, "kill -TERM -"+g+"\n") {
		t.Errorf("group %s of its own session: %q; want the fake's TERM", g, out)
	}
}
