package host

// Tests of the pure helpers: no sshd, no root.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	got := redact("pw=abc123 token=abc123xyz and abc", []string{"", "abc123", "abc123xyz"})
	if want := "pw=" + redactMark + " token=" + redactMark + " and abc"; got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, s := range []string{"0123", "4567", "89", "abcdefghijkl"} {
		_, _ = b.Write([]byte(s))
	}
	if b.String() != "efghijkl" {
		t.Errorf("tail = %q", b.String())
	}
	b = &tailBuffer{max: 8}
	_, _ = b.Write([]byte("012345"))
	_, _ = b.Write([]byte("6789"))
	if b.String() != "23456789" {
		t.Errorf("tail = %q", b.String())
	}
}

func TestKnownHostsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/me"}, "/home/me/.ssh/known_hosts"},
		{map[string]string{"HOME": "/home/me", "SSH_KNOWN_HOSTS": ""}, ""},
		{map[string]string{"HOME": "/home/me", "SSH_KNOWN_HOSTS": "/etc/fleet_hosts"}, "/etc/fleet_hosts"},
	} {
		if got := KnownHostsFromEnv(env(tc.vars)); got != tc.want {
			t.Errorf("KnownHostsFromEnv(%v) = %q, want %q", tc.vars, got, tc.want)
		}
	}
}

func TestSSHOptions(t *testing.T) {
	args, err := sshOptions("h1", map[string]any{
		"StrictHostKeyChecking": false, "ProxyCommand": "ssh -W %h:%p jump; echo", "ConnectionAttempts": float64(3),
		"KexAlgorithms": []any{"curve25519-sha256", "ecdh-sha2-nistp256"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-o", "ConnectionAttempts=3", "-o", "KexAlgorithms=curve25519-sha256,ecdh-sha2-nistp256",
		"-o", "ProxyCommand=ssh -W %h:%p jump; echo", "-o", "StrictHostKeyChecking=no"}
	if !slices.Equal(args, want) {
		t.Errorf("args = %q\nwant %q", args, want)
	}
	for _, bad := range []map[string]any{{"-oProxyCommand": "x"}, {"User": "a\nProxyCommand x"}, {"User": map[string]any{}}} {
		if _, err := sshOptions("h1", bad); err == nil || !strings.Contains(err.Error(), "host h1") {
			t.Errorf("sshOptions(%v) = %v; want an error naming the host", bad, err)
		}
	}
}

func TestParseStat(t *testing.T) {
	fi, err := parseStat("1234 81ed root root 0 0")
	if err != nil || fi.Size != 1234 || fi.Mode != 0o755 || !fi.IsRegular() || fi.Owner() != "root:root" {
		t.Errorf("regular 0755: %+v, %v", fi, err)
	}
	fi, err = parseStat("4096 43ff me users 1000 100")
	if err != nil || !fi.IsDir() || fi.Mode&os.ModeSticky == 0 || fi.Mode.Perm() != 0o777 || fi.UID != 1000 {
		t.Errorf("sticky dir: %+v, %v", fi, err)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Error("parseStat(garbage) succeeded")
	}
}

func TestModesAndOwners(t *testing.T) {
	for m, want := range map[os.FileMode]string{0o644: "644", 0o755 | os.ModeSetuid: "4755", 0o1777 | os.ModeSticky: "1777", 0o2750 | os.ModeSetgid: "2750"} {
		if got := chmodArg(m); got != want {
			t.Errorf("chmodArg(%v) = %s, want %s", m, got, want)
		}
	}
	fi := FileInfo{User: "app", Group: "staff", UID: 1001, GID: 50}
	for owner, want := range map[string]bool{"": true, "app": true, "1001": true, "app:staff": true, "app:50": true, "app:root": false, "root": false} {
		if ownerMatches(owner, fi) != want {
			t.Errorf("ownerMatches(%q) = %v", owner, !want)
		}
	}
	for _, bad := range []string{"-r", "a b", "a;b", "a:b:c", "a:"} {
		if checkOwner(bad) == nil {
			t.Errorf("owner %q accepted", bad)
		}
	}
}

func TestExpandHome(t *testing.T) {
	if got := expandHome("~/.ssh/id", "/h"); got != filepath.Join("/h", ".ssh", "id") {
		t.Errorf("expandHome = %s", got)
	}
	if got := expandHome("/abs/~/x", "/h"); got != "/abs/~/x" {
		t.Errorf("expandHome = %s", got)
	}
}
