package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckMemory(t *testing.T) {
	spec := Spec{Name: "dev", Image: ImageExtra}
	if err := checkMemory(spec, 5, 24*1024); err != nil {
		t.Fatalf("5 hosts in 24 GiB: %v", err)
	}
	err := checkMemory(spec, 5, 600)
	if err == nil {
		t.Fatal("5 extra hosts in 600 MiB should be refused")
	}
	for _, want := range []string{`fleet "dev" will not fit`, "5 host(s)", "MemAvailable is 600 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// Base hosts are cheaper: the same count fits where extra does not.
	if memPerHostMiB(ImageBase) >= memPerHostMiB(ImageExtra) {
		t.Error("a base host should be estimated below an extra (firewalld) host")
	}
	if err := checkMemory(Spec{Name: "dev", Image: ImageBase}, 5, 5*memBaseMiB+memReserveMiB); err != nil {
		t.Errorf("exact fit refused: %v", err)
	}
}

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

func TestBackendSelector(t *testing.T) {
	t.Setenv("CARGOSHIP_FLEET_DIR", t.TempDir())
	t.Setenv("CARGOSHIP_FLEET_CACHE", t.TempDir())
	p, err := Backend("container")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*Container); !ok {
		t.Errorf("Backend(container) = %T", p)
	}
	if _, err := Backend("microvm"); !errors.Is(err, ErrNotLinked) {
		t.Errorf("Backend(microvm) without its package = %v, want ErrNotLinked", err)
	}
	_, err = Backend("nope")
	if err == nil || !strings.Contains(err.Error(), "container") {
		t.Errorf("Backend(nope) = %v, want an error listing the known backends", err)
	}
	// The seam for other backends.
	Register("fake-for-test", func(Options) (Provider, error) { return p, nil })
	if got, err := Backend("fake-for-test"); err != nil || got != p {
		t.Errorf("registered backend: %v, %v", got, err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Setenv("CARGOSHIP_FLEET_DIR", "")
	t.Setenv("CARGOSHIP_FLEET_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	o, err := Options{}.withDefaults()
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
	if o, _ := (Options{}).withDefaults(); o.StateDir != "/y/fleets" {
		t.Errorf("CARGOSHIP_FLEET_DIR ignored: %s", o.StateDir)
	}
}

func TestNspawnArgsCarryTheFlagsThatCannotBeLeftOut(t *testing.T) {
	args := strings.Join(nspawnArgs(pathsFor("/f", "kc0"), "cs-dev-kc0", Host{Name: "kc0"}), " ")
	for _, want := range []string{
		"--boot", "--register=no", "--keep-unit", "--private-network",
		"--network-namespace-path=/run/netns/cs-dev-kc0", "--hostname=kc0",
		"--system-call-filter=fanotify_init", "--system-call-filter=fanotify_mark",
		"--directory=/f/hosts/kc0/merged",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("nspawn args lack %s: %s", want, args)
		}
	}
}

func TestRecipeVersion(t *testing.T) {
	b, e := baseVersion(), extraVersion()
	if b2, e2 := baseVersion(), extraVersion(); b2 != b || e2 != e {
		t.Fatal("recipe versions must be deterministic")
	}
	saved := extraPackages
	extraPackages = append(append([]string{}, saved...), "htop")
	defer func() { extraPackages = saved }()
	if baseVersion() != b {
		t.Error("an extra package changed the base version")
	}
	if extraVersion() == e {
		t.Error("an extra package did not change the extra version")
	}
}

func TestLayerVerification(t *testing.T) {
	dir := t.TempDir()
	b := &imageBuilder{cache: dir, log: testLogger(t)}
	layer := filepath.Join(dir, "layer")
	checks := [][]string{{"usr/bin/a", "bin/a"}, {"usr/sbin/b"}}
	if err := os.MkdirAll(filepath.Join(layer, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(layer, "bin/a"), nil, 0o755)
	// Complete-looking files but no stamp: a half-built layer.
	if err := b.current(layer, "v1", checks); err == nil {
		t.Error("a layer without a stamp was accepted")
	}
	start := time.Now()
	if err := b.writeStamp(layer, "v1", "http://m", start); err != nil {
		t.Fatal(err)
	}
	if err := b.current(layer, "v1", checks); err == nil || !strings.Contains(err.Error(), "usr/sbin/b") {
		t.Errorf("missing usr/sbin/b not reported: %v", err)
	}
	os.MkdirAll(filepath.Join(layer, "usr/sbin"), 0o755)
	os.WriteFile(filepath.Join(layer, "usr/sbin/b"), nil, 0o755)
	if err := b.current(layer, "v1", checks); err != nil {
		t.Errorf("complete layer rejected: %v", err)
	}
	if err := b.current(layer, "v2", checks); err == nil {
		t.Error("a layer stamped with another recipe version was accepted")
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
