package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemAvailable(t *testing.T) {
	m, err := MemAvailableMiB()
	if err != nil || m <= 0 {
		t.Fatalf("MemAvailableMiB() = %d, %v", m, err)
	}
}

func TestMirrorParsing(t *testing.T) {
	deb822 := `Types: deb
# a comment
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://mirror.example/debian/
Suites: bookworm bookworm-updates
Components: main
`
	if got := mirrorFromDeb822(deb822); got != "http://mirror.example/debian" {
		t.Errorf("deb822 mirror = %q", got)
	}
	oneLine := "# comment\ndeb http://sec.example/debian-security bookworm-security main\ndeb [arch=amd64 signed-by=/x.gpg] http://m.example/debian bookworm main\n"
	if got := mirrorFromOneLine(oneLine); got != "http://m.example/debian" {
		t.Errorf("one-line mirror = %q", got)
	}
	if got := mirrorFromDeb822("Types: deb-src\nURIs: http://x\nSuites: bookworm\n"); got != "" {
		t.Errorf("deb-src only should give no mirror, got %q", got)
	}
}

// fakeProvider stands in for a backend registered by another package.
type fakeProvider struct{ Provider }

func TestBackendSelector(t *testing.T) {
	t.Setenv("CARGOSHIP_FLEET_DIR", t.TempDir())
	t.Setenv("CARGOSHIP_FLEET_CACHE", t.TempDir())
	// Both backends live in packages of their own, which this test does
	// not import.
	for _, name := range []string{"container", "microvm"} {
		_, err := Backend(name)
		if !errors.Is(err, ErrNotLinked) {
			t.Errorf("Backend(%s) without its package = %v, want ErrNotLinked", name, err)
		} else if !strings.Contains(err.Error(), "import github.com/colonel-byte/cargoship/test/fleet/"+name) {
			t.Errorf("Backend(%s) = %v, want it to name the package to import", name, err)
		}
	}
	_, err := Backend("nope")
	if err == nil || !strings.Contains(err.Error(), "container") || !strings.Contains(err.Error(), "microvm") {
		t.Errorf("Backend(nope) = %v, want an error listing the known backends", err)
	}
	// The seam for other backends.
	var p Provider = fakeProvider{}
	Register("fake-for-test", func(Options) (Provider, error) { return p, nil })
	if got, err := Backend("fake-for-test"); err != nil || got != p {
		t.Errorf("registered backend: %v, %v", got, err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Setenv("CARGOSHIP_FLEET_DIR", "")
	t.Setenv("CARGOSHIP_FLEET_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	o, err := Options{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	// Run from test/fleet, the state dir is still the repository's build/fleet.
	if !strings.HasSuffix(o.StateDir, "/build/fleet") || strings.Contains(o.StateDir, "test/fleet") {
		t.Errorf("StateDir = %s, want <repo>/build/fleet", o.StateDir)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(o.StateDir)), "go.mod")); err != nil {
		t.Errorf("StateDir %s is not under the repository root: %v", o.StateDir, err)
	}
	if o.CacheDir != "/x/cache/cargoship/fleet" {
		t.Errorf("CacheDir = %s", o.CacheDir)
	}
	t.Setenv("CARGOSHIP_FLEET_DIR", "/y/fleets")
	if o, _ := (Options{}).WithDefaults(); o.StateDir != "/y/fleets" {
		t.Errorf("CARGOSHIP_FLEET_DIR ignored: %s", o.StateDir)
	}
}

func TestPasswordAndKeys(t *testing.T) {
	p1, _ := newPassword()
	p2, _ := newPassword()
	if p1 == p2 || len(p1) < 16 || strings.ContainsAny(p1, " '\"$\\:") {
		t.Errorf("passwords %q %q: want distinct, long, shell-safe", p1, p2)
	}
	cache := t.TempDir()
	d1, err := ensureHostKeys(cache, "dev", "kc0")
	if err != nil {
		t.Fatal(err)
	}
	k1, err := hostPublicKeys(d1)
	if err != nil || len(k1) != 3 || k1[0].Type() != "ssh-ed25519" {
		t.Fatalf("host keys: %v %v", k1, err)
	}
	st, _ := os.Stat(filepath.Join(d1, "ssh_host_rsa_key"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("private host key mode %o, sshd wants 0600", st.Mode().Perm())
	}
	d2, _ := ensureHostKeys(cache, "dev", "kc0")
	k2, _ := hostPublicKeys(d2)
	if string(k1[0].Marshal()) != string(k2[0].Marshal()) {
		t.Error("host keys were regenerated instead of reused from the cache")
	}
}
