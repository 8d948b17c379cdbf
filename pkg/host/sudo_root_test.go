package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func TestSudoModes(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for _, tc := range []struct {
		user string
		env  map[string]string
		pwe  string
		want SudoMode
	}{
		{user: "root", want: SudoRoot},
		{user: userNoPW, want: SudoNoPassword},
		{user: userPW, env: map[string]string{"CSTEST_SUDO": f.password}, pwe: "CSTEST_SUDO", want: SudoPassword},
	} {
		t.Run(tc.user, func(t *testing.T) {
			t.Parallel()
			for name, h := range map[string]*v1alpha1.Host{"ssh": f.sshHost(tc.user), "openSSH": f.openSSHHost(tc.user)} {
				h.SudoPasswordEnv = tc.pwe
				c := connect(t, h, f.opts(nil, tc.env))
				if mode, err := c.SudoMode(); mode != tc.want || err != nil {
					t.Fatalf("%s: SudoMode = %s, %v; want %s", name, mode, err, tc.want)
				}
				if out, err := c.Sudo(context.Background(), "id -u"); err != nil || out != "0\n" {
					t.Errorf("%s: Sudo(id -u) = %q, %v", name, out, err)
				}
				if out, err := c.Run(context.Background(), "id -un"); err != nil || out != tc.user+"\n" {
					t.Errorf("%s: Run(id -un) = %q, %v", name, out, err)
				}
				// the command's own stdin arrives whole, after sudo took the password
				out, err := c.Sudo(context.Background(), "cat; echo; id -u", WithStdin(strings.NewReader("line one\nline two")))
				if err != nil || out != "line one\nline two\n0\n" {
					t.Errorf("%s: Sudo with stdin = %q, %v", name, out, err)
				}
			}
		})
	}
}

func TestSudoPasswordNeverShows(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.sshHost(userPW)
	h.SudoPasswordEnv = "CSTEST_SUDO"
	var log syncBuffer
	c := connect(t, h, f.opts(&log, map[string]string{"CSTEST_SUDO": f.password}))
	// a failing command that prints what it was given
	_, err := c.Sudo(context.Background(), "cat >&2; echo "+f.password+" >&2; exit 3", WithStdin(strings.NewReader("input")))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("Sudo: %v; want exit 3", err)
	}
	if strings.Contains(err.Error(), f.password) || strings.Contains(log.String(), f.password) {
		t.Errorf("the sudo password shows in the error or the log:\n%v\n%s", err, log.String())
	}
	if !strings.Contains(ee.Stderr, "input") || !strings.Contains(ee.Stderr, redactMark) {
		t.Errorf("stderr %q: want the command's input and the password masked", ee.Stderr)
	}
}

func TestSudoWithoutAWay(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for _, tc := range []struct {
		name string
		user string
		pwe  string
		env  map[string]string
		want string
	}{
		{"no sudoPasswordEnv", userPW, "", nil, "sudo needs a password for " + userPW + ": set sudoPasswordEnv"},
		{"variable unset", userPW, "CSTEST_SUDO", nil, "$CSTEST_SUDO (the host's sudoPasswordEnv) is not set"},
		{"wrong password", userPW, "CSTEST_SUDO", map[string]string{"CSTEST_SUDO": "wrong"}, "sudo did not accept the password in $CSTEST_SUDO"},
		{"no sudo rights", userNoSudo, "", nil, "sudo needs a password for " + userNoSudo},
		{"no sudo rights, a password given", userNoSudo, "CSTEST_SUDO", map[string]string{"CSTEST_SUDO": "whatever"}, "did not accept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := f.sshHost(tc.user)
			h.SudoPasswordEnv = tc.pwe
			c := connect(t, h, f.opts(nil, tc.env))
			mode, why := c.SudoMode()
			if mode != SudoNone || why == nil || !strings.Contains(why.Error(), tc.want) || !strings.Contains(why.Error(), "host 127.0.0.1") {
				t.Fatalf("SudoMode = %s, %v; want none and %q", mode, why, tc.want)
			}
			if _, err := c.Sudo(context.Background(), "true"); err == nil || err.Error() != why.Error() {
				t.Errorf("Sudo = %v; want the reason %v", err, why)
			}
			if _, err := c.Run(context.Background(), "true"); err != nil {
				t.Errorf("Run still works without sudo: %v", err)
			}
			if strings.Contains(why.Error(), "wrong") || strings.Contains(why.Error(), "whatever") {
				t.Errorf("the password shows in %v", why)
			}
		})
	}
}

// TestSudoPasswordNeverReachesTheCommand: sudo lets the command through
// without asking, so sudo -S reads nothing; the password must still not
// end up in what the command reads.
func TestSudoPasswordNeverReachesTheCommand(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for name, h := range map[string]*v1alpha1.Host{"ssh": f.sshHost(userPWSh), "openSSH": f.openSSHHost(userPWSh)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h.SudoPasswordEnv = "CSTEST_SUDO"
			c := connect(t, h, f.opts(nil, map[string]string{"CSTEST_SUDO": f.password}))
			if mode, err := c.SudoMode(); mode != SudoPassword || err != nil {
				t.Fatalf("SudoMode = %s, %v; want %s", mode, err, SudoPassword)
			}
			p := filepath.Join(t.TempDir(), "written")
			data := []byte("what the file holds\n")
			if _, err := WriteFile(context.Background(), c, p, data, 0o600, ""); err != nil {
				t.Fatal(err)
			}
			// the messages never print what was read: it may be the password
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
				t.Errorf("the file holds %d bytes (password inside: %v), %v; want %q",
					len(got), bytes.Contains(got, []byte(f.password)), err, data)
			}
			out, err := c.Sudo(context.Background(), "cat; id -u")
			if err != nil || out != "0\n" {
				t.Errorf("Sudo without stdin read %d bytes (password inside: %v), %v; want only id's 0",
					len(out), strings.Contains(out, f.password), err)
			}
		})
	}
}

// TestSudoProbeHasTheCommandsShape: "true" runs without a password but
// the commands, sh -c, do not: the connection must use the password.
func TestSudoProbeHasTheCommandsShape(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.sshHost(userPWTrue)
	h.SudoPasswordEnv = "CSTEST_SUDO"
	c := connect(t, h, f.opts(nil, map[string]string{"CSTEST_SUDO": f.password}))
	if mode, err := c.SudoMode(); mode != SudoPassword || err != nil {
		t.Fatalf("SudoMode = %s, %v; want %s", mode, err, SudoPassword)
	}
	if out, err := c.Sudo(context.Background(), "id -u"); err != nil || out != "0\n" {
		t.Errorf("Sudo(id -u) = %q, %v", out, err)
	}
}
