package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

func TestCheckMemory(t *testing.T) {
	spec := fleet.Spec{Name: "dev", Image: ImageExtra}
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
	if err := checkMemory(fleet.Spec{Name: "dev", Image: ImageBase}, 5, 5*memBaseMiB+memReserveMiB); err != nil {
		t.Errorf("exact fit refused: %v", err)
	}
}

// Importing this package registers it as the "container" backend, the
// default one.
func TestBackendSelector(t *testing.T) {
	t.Setenv("CARGOSHIP_FLEET_DIR", t.TempDir())
	t.Setenv("CARGOSHIP_FLEET_CACHE", t.TempDir())
	t.Setenv("CARGOSHIP_FLEET_BACKEND", "")
	for _, name := range []string{"container", ""} {
		p, err := fleet.Backend(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(*Container); !ok {
			t.Errorf("Backend(%q) = %T", name, p)
		}
	}
}

func TestNspawnArgsCarryTheFlagsThatCannotBeLeftOut(t *testing.T) {
	args := strings.Join(nspawnArgs(pathsFor("/f", "kc0"), "cs-dev-kc0", fleet.Host{Name: "kc0"}), " ")
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
