package microvm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testIdentity() identity {
	return identity{
		Hostname: "kc0",
		Address:  "10.73.9.11",
		Hosts:    [][2]string{{"10.73.9.11", "kc0"}, {"10.73.9.12", "kw0"}},
		HostKeys: map[string][]byte{
			"ssh_host_ed25519_key":     []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nEOF\n'quoted' $(not run)\n"),
			"ssh_host_ed25519_key.pub": []byte("ssh-ed25519 AAAA kc0\n"),
		},
		AuthorizedKey: "ssh-ed25519 AAAAfleet cargoship-fleet",
		Users:         []string{"root", "tester"},
		SudoUser:      "sudopw", SudoPassword: "pw'; touch /tmp/x #",
	}
}

// TestFirstBootScriptWritesTheIdentity runs the script with sh into a
// directory and reads back what a guest would have.
func TestFirstBootScriptWritesTheIdentity(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(script, []byte(firstBootScript(testIdentity())), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Env = append(os.Environ(), "CARGOSHIP_SEED_ROOT="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("first-boot script: %v\n%s", err, out)
	}
	read := func(p string) (string, os.FileMode) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(filepath.Join(root, p))
		return string(b), st.Mode().Perm()
	}
	if got, _ := read("etc/hostname"); got != "kc0\n" {
		t.Errorf("hostname %q", got)
	}
	if got, _ := read("etc/hosts"); !strings.Contains(got, "10.73.9.12\tkw0\n") {
		t.Errorf("/etc/hosts lacks kw0:\n%s", got)
	}
	if got, _ := read("etc/systemd/network/20-cargoship-fleet.network"); !strings.Contains(got, "Name=enp0s4\n") || !strings.Contains(got, "Address=10.73.9.11/24\n") {
		t.Errorf("fleet network:\n%s", got)
	}
	key, mode := read("etc/ssh/ssh_host_ed25519_key")
	if key != string(testIdentity().HostKeys["ssh_host_ed25519_key"]) || mode != 0o600 {
		t.Errorf("private host key %o %q: want the bytes as given, 0600", mode, key)
	}
	if _, mode := read("etc/ssh/ssh_host_ed25519_key.pub"); mode != 0o644 {
		t.Errorf("public host key %o, want 0644", mode)
	}
	for _, p := range []string{"root/.ssh/authorized_keys", "home/tester/.ssh/authorized_keys"} {
		if got, mode := read(p); got != "ssh-ed25519 AAAAfleet cargoship-fleet\n" || mode != 0o600 {
			t.Errorf("%s %o %q", p, mode, got)
		}
	}
}

func TestFirstBootScriptQuotesThePassword(t *testing.T) {
	s := firstBootScript(testIdentity())
	if !strings.Contains(s, `'sudopw:pw'"'"'; touch /tmp/x #'`) && !strings.Contains(s, `'sudopw:pw'\''; touch /tmp/x #'`) {
		t.Errorf("the sudo password does not reach chpasswd as one quoted word:\n%s", s)
	}
}
