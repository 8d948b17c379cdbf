package microvm

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// mutateLeaf changes the n-th string or number reachable from v (a
// recipe's fields, its slices' elements, its maps' values), counting
// down n, and says whether it found one to change.
func mutateLeaf(t *testing.T, v reflect.Value, n *int, path string, changed *string) bool {
	t.Helper()
	switch v.Kind() {
	case reflect.String, reflect.Int, reflect.Int64, reflect.Uint32:
		if *n > 0 {
			*n--
			return false
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Uint32:
			v.SetUint(v.Uint() + 1)
		default:
			v.SetInt(v.Int() + 1)
		}
		*changed = path
		return true
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Fatalf("%s.%s is unexported: json.Marshal, and so the recipe key, skips it", path, f.Name)
			}
			if mutateLeaf(t, v.Field(i), n, path+"."+f.Name, changed) {
				return true
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if mutateLeaf(t, v.Index(i), n, path+"["+string(rune('0'+i%10))+"]", changed) {
				return true
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if mutateLeaf(t, e, n, path+"["+k.String()+"]", changed) {
				v.SetMapIndex(k, e)
				return true
			}
		}
	default:
		t.Fatalf("%s: recipe holds a %s, which mutateLeaf does not know", path, v.Kind())
	}
	return false
}

// Every value the recipe holds is part of its key: changing any one of
// them, anywhere, gives another key, so a changed recipe is rebuilt.
func TestImageRecipeKeyCoversEveryValue(t *testing.T) {
	base := builtinRecipe().key()
	if base != builtinRecipe().key() {
		t.Fatal("the recipe key is not deterministic")
	}
	if len(base) != 64 {
		t.Fatalf("key %q is not a hex sha256", base)
	}
	count := 0
	for i := 0; ; i++ {
		r := builtinRecipe()
		n := i
		var changed string
		if !mutateLeaf(t, reflect.ValueOf(&r).Elem(), &n, "recipe", &changed) {
			break
		}
		count++
		if r.key() == base {
			t.Errorf("changing %s leaves the recipe key as it was", changed)
		}
	}
	if count < 50 {
		t.Fatalf("only %d values in the recipe were changed: the walk missed some", count)
	}
	// adding or removing an entry changes it too
	r := builtinRecipe()
	r.Packages = append(r.Packages, "vim")
	if r.key() == base {
		t.Error("adding a package leaves the recipe key as it was")
	}
	r = builtinRecipe()
	delete(r.Modules, fapolicydModule)
	if r.key() == base {
		t.Error("removing a CIL module leaves the recipe key as it was")
	}
}

// Nothing the image is built from floats: the suite is a release code
// name and nothing says latest, stable, testing or sid.
func TestImageRecipePinned(t *testing.T) {
	r := builtinRecipe()
	if r.Suite != "bookworm" {
		t.Errorf("suite %q, want bookworm (Debian 12)", r.Suite)
	}
	if r.Arch != "amd64" {
		t.Errorf("arch %q, want amd64", r.Arch)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	floating := regexp.MustCompile(`(?i)\b(latest|stable|testing|unstable|sid|trixie|forky|experimental)\b`)
	if m := floating.FindAllString(string(b), -1); m != nil {
		t.Errorf("the recipe names floating references %q", m)
	}
	for _, p := range r.Packages {
		if !regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]*$`).MatchString(p) {
			t.Errorf("package %q is not a plain Debian package name (no version, release or URL: the suite pins it)", p)
		}
	}
	if strings.Contains(string(b), "://") && !strings.Contains(string(b), "file://") {
		t.Errorf("the recipe names a URL; the mirror comes from fleet.DebianMirror")
	}
}

// unitFile parses a systemd unit into section.key -> values (a key given
// twice keeps both; an empty assignment resets it, as systemd does).
func unitFile(t *testing.T, text string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	section := ""
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = l[1 : len(l)-1]
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Fatalf("line %d %q is not key=value in a section", i+1, l)
			}
			if v == "" {
				out[section+"."+k] = nil
				continue
			}
			out[section+"."+k] = append(out[section+"."+k], strings.Fields(v)...)
		}
	}
	return out
}

func recipeFile(t *testing.T, r recipe, path string) backend.RootFile {
	t.Helper()
	for _, f := range r.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("the recipe writes no %s", path)
	return backend.RootFile{}
}

// systemdEscapePath is `systemd-escape --path` for the simple paths used here.
func systemdEscapePath(p string) string {
	var b strings.Builder
	for i, c := range strings.Trim(p, "/") {
		switch {
		case c == '/':
			b.WriteByte('-')
		case c == '-' || (c == '.' && i == 0):
			b.WriteString(`\x2d`)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func TestImageSeedUnit(t *testing.T) {
	r := builtinRecipe()
	f := recipeFile(t, r, "etc/systemd/system/"+seedUnit)
	if f.Mode != 0o644 {
		t.Errorf("unit mode %o", f.Mode)
	}
	u := unitFile(t, f.Content)
	want := func(key string, values ...string) {
		t.Helper()
		for _, v := range values {
			if !slices.Contains(u[key], v) {
				t.Errorf("%s = %q, want it to have %q", key, u[key], v)
			}
		}
	}
	want("Unit.ConditionPathExists", "!"+SeedDoneMarker)
	want("Unit.DefaultDependencies", "no")
	dev := systemdEscapePath(seedDevice) + ".device"
	if dev != `dev-disk-by\x2dlabel-CIDATA.device` {
		t.Fatalf("escape %s: %s", seedDevice, dev)
	}
	want("Unit.Requires", dev)
	// the device it requires gets as long as any unit does, not
	// systemd's 90 s (the guest's manager drop-in)
	m := unitFile(t, recipeFile(t, r, "etc/systemd/system.conf.d/10-cargoship.conf").Content)
	if got := m["Manager.DefaultDeviceTimeoutSec"]; !slices.Equal(got, []string{"10min"}) ||
		!strings.Contains(slowMachineCmdline, "systemd.default_timeout_start_sec=600 ") {
		t.Errorf("devices wait %q; units start within %q: want both ten minutes", got, slowMachineCmdline)
	}
	want("Unit.After", dev, "local-fs.target")
	want("Unit.Before", "ssh.service", "fapolicyd.service", "systemd-networkd.service", "systemd-hostnamed.service", "sysinit.target")
	want("Service.Type", "oneshot")
	want("Service.ExecStart", seedScript)
	want("Install.WantedBy", "multi-user.target")
	if !slices.Contains(r.Enabled, seedUnit) {
		t.Errorf("%s is not enabled", seedUnit)
	}
	for _, s := range []string{"ssh.service", "fapolicyd.service", "firewalld.service", "systemd-networkd.service"} {
		if !slices.Contains(r.Enabled, s) {
			t.Errorf("%s is not enabled", s)
		}
	}

	sc := recipeFile(t, r, strings.TrimPrefix(seedScript, "/"))
	if sc.Mode != 0o755 || !strings.HasPrefix(sc.Content, "#!/bin/sh\n") {
		t.Errorf("%s: mode %o, starts %q", seedScript, sc.Mode, sc.Content[:min(20, len(sc.Content))])
	}
	for _, s := range []string{"mount -t vfat -o ro " + seedDevice + " " + seedMount, "sh " + seedMount + "/user-data",
		"umount " + seedMount, "touch " + SeedDoneMarker, "restorecon -R /var/lib/cargoship-seed"} {
		if !strings.Contains(sc.Content, s) {
			t.Errorf("%s does not run %q:\n%s", seedScript, s, sc.Content)
		}
	}
	// the marker is the last thing: only a seed that ran leaves it
	if strings.Index(sc.Content, "touch "+SeedDoneMarker) < strings.Index(sc.Content, "/user-data") {
		t.Error("the marker is touched before the user-data runs")
	}
	p := filepath.Join(t.TempDir(), "seed")
	if err := os.WriteFile(p, []byte(sc.Content), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
		t.Errorf("sh -n %s: %v: %s", seedScript, err, out)
	}
}

func TestImageNetworkUnits(t *testing.T) {
	r := builtinRecipe()
	n := unitFile(t, recipeFile(t, r, "etc/systemd/network/10-mgmt.network").Content)
	if !slices.Equal(n["Match.Name"], []string{"enp0s3"}) || !slices.Equal(n["Network.DHCP"], []string{"ipv4"}) {
		t.Errorf("10-mgmt.network: %v", n)
	}
	w := recipeFile(t, r, "etc/systemd/system/systemd-networkd-wait-online.service.d/10-cargoship.conf").Content
	if !strings.Contains(w, "ExecStart=\n") {
		t.Error("the wait-online drop-in does not reset ExecStart, so systemd would run both")
	}
	wu := unitFile(t, w)
	if !slices.Contains(wu["Service.ExecStart"], "--interface=enp0s3") || slices.Contains(wu["Service.ExecStart"], PrivateInterface) {
		t.Errorf("wait-online waits for %q, want the management NIC only", wu["Service.ExecStart"])
	}
	if fs := recipeFile(t, r, "etc/fstab").Content; fs != "/dev/vda / ext4 defaults 0 1\n" {
		t.Errorf("fstab %q", fs)
	}
	if c := recipeFile(t, r, "etc/selinux/config").Content; !strings.Contains(c, "SELINUX=enforcing\n") || !strings.Contains(c, "SELINUXTYPE=default\n") {
		t.Errorf("selinux config %q", c)
	}
	if m := recipeFile(t, r, "etc/machine-id"); m.Content != "" || m.Mode != 0o444 {
		t.Errorf("machine-id %q %o, want empty 0444", m.Content, m.Mode)
	}
	for _, m := range []string{"selinux-autorelabel-mark.service", "apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_reap.service"} {
		if !slices.Contains(r.Masked, m) {
			t.Errorf("%s is not masked", m)
		}
	}
}

func TestImageRecipeKernelCmdline(t *testing.T) {
	r := builtinRecipe()
	for _, w := range []string{"root=/dev/vda", "rw", "console=ttyS0", "security=selinux", "selinux=1", "enforcing=1"} {
		if !slices.Contains(strings.Fields(r.Cmdline), w) {
			t.Errorf("%q lacks %s", r.Cmdline, w)
		}
	}
}

func TestImageRecipeSELinuxModules(t *testing.T) {
	r := builtinRecipe()
	if !slices.Equal(slices.Sorted(maps.Keys(r.Modules)), []string{containerDoubleModule, fapolicydModule, firewalldModule}) {
		t.Fatalf("modules %v", slices.Sorted(maps.Keys(r.Modules)))
	}
	d := r.Modules[containerDoubleModule]
	for _, s := range []string{
		"(type container_runtime_t)", "(type container_runtime_exec_t)", "(type container_var_lib_t)", "(type container_file_t)",
		"(typeattributeset exec_type (container_runtime_exec_t))",
		"(typetransition init_t container_runtime_exec_t process container_runtime_t)",
		"(typepermissive container_runtime_t)",
	} {
		if !strings.Contains(d, s) {
			t.Errorf("%s lacks %s", containerDoubleModule, s)
		}
	}
	if !strings.Contains(r.Modules[fapolicydModule], "(allow initrc_t file_type (dir (watch_mount watch_with_perm") {
		t.Errorf("%s does not let initrc_t place fanotify marks", fapolicydModule)
	}
	for name, cil := range r.Modules {
		if strings.Count(cil, "(") != strings.Count(cil, ")") {
			t.Errorf("%s: unbalanced parentheses", name)
		}
	}
	if !slices.Contains(r.Fapolicy.SampleRules, "90-deny-execute.rules") || !slices.Contains(r.Fapolicy.SampleRules, "42-trusted-elf.rules") {
		t.Errorf("sample rules %v", r.Fapolicy.SampleRules)
	}
	if !slices.IsSorted(r.Fapolicy.SampleRules) {
		t.Errorf("sample rules %v are not in fagenrules' order", r.Fapolicy.SampleRules)
	}
}

func writeFakeImage(t *testing.T, dir, recipe string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{kernelFile, initrdFile, diskFile} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(imageStamp{Recipe: recipe})
	if err := os.WriteFile(filepath.Join(dir, stampFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImageCurrent(t *testing.T) {
	r := builtinRecipe()
	cache := t.TempDir()
	key := r.key()
	im := imageIn(filepath.Join(cache, key), r)
	if im.current() == nil {
		t.Fatal("a missing image is current")
	}
	writeFakeImage(t, im.Dir, key)
	if err := im.current(); err != nil {
		t.Fatal(err)
	}
	// found in the cache: no build, no lock, no root needed
	got, err := EnsureImage(context.Background(), cache, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got != im || got.Cmdline != GuestCmdline || got.Recipe != key || got.Disk != filepath.Join(cache, key, "root.img") {
		t.Fatalf("EnsureImage = %+v, want %+v", got, im)
	}
	if err := os.Truncate(im.Initrd, 0); err != nil {
		t.Fatal(err)
	}
	if im.current() == nil {
		t.Error("an image with an empty initrd is current")
	}
	writeFakeImage(t, im.Dir, strings.Repeat("0", 64))
	if im.current() == nil {
		t.Error("an image whose stamp names another recipe is current")
	}
}

func TestImagePrune(t *testing.T) {
	cache := t.TempDir()
	keep, old := strings.Repeat("a", 64), strings.Repeat("b", 64)
	writeFakeImage(t, filepath.Join(cache, keep), keep)
	writeFakeImage(t, filepath.Join(cache, old), old)
	for _, n := range []string{keep + ".log", old + ".log", "build.lock", "notes.log"} {
		if err := os.WriteFile(filepath.Join(cache, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(cache, debsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	pruneImages(cache, keep, slog.New(slog.DiscardHandler))
	entries, _ := os.ReadDir(cache)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{keep, keep + ".log", "build.lock", debsDir, "notes.log"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("CARGOSHIP_MICROVM_CACHE", "/srv/mv")
	if d, err := DefaultCacheDir(); err != nil || d != "/srv/mv" {
		t.Fatalf("%q %v", d, err)
	}
	t.Setenv("CARGOSHIP_MICROVM_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/srv/cache")
	if d, err := DefaultCacheDir(); err != nil || d != "/srv/cache/cargoship/microvm" {
		t.Fatalf("%q %v", d, err)
	}
}

func TestEditLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fapolicyd.conf")
	if err := os.WriteFile(p, []byte("a = 1\ntrust = rpmdb,file\nb = 2\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := editLine(p, "trust = rpmdb,file", "trust = file"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "a = 1\ntrust = file\nb = 2\n" {
		t.Fatalf("%q", b)
	}
	if editLine(p, "trust = rpmdb,file", "x") == nil {
		t.Fatal("editing a line that is not there succeeds")
	}
}
