package microvm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestImageRecipeFileContexts(t *testing.T) {
	r := builtinRecipe()
	cfg := recipeFile(t, r, "etc/selinux/config").Content
	typ := ""
	for _, l := range strings.Split(cfg, "\n") {
		if v, ok := strings.CutPrefix(l, "SELINUXTYPE="); ok {
			typ = v
		}
	}
	if want := "/etc/selinux/" + typ + "/contexts/files/file_contexts"; typ == "" || r.FileContexts != want {
		t.Errorf("FileContexts %q, want %q (SELINUXTYPE %q)", r.FileContexts, want, typ)
	}
	// labelChecks name files the recipe makes
	for p := range labelChecks {
		if u, ok := strings.CutPrefix(p, "home/"); ok {
			if u = strings.TrimSuffix(u, "/.ssh"); !slices.Contains(r.Users, u) {
				t.Errorf("labelChecks' %s: %s is not one of the recipe's users %v", p, u, r.Users)
			}
		}
	}
	recipeFile(t, r, strings.TrimPrefix(seedScript, "/"))
}

// a piece of Debian 12's file_contexts, and its subs_dist
const sampleFileContexts = `# comment <<none>>
/run/.*	<<none>>
/tmp/.*	<<none>>
/proc	-d	<<none>>
/lost\+found/.*	<<none>>
/run/user/[^/]+/.+	-d	<<none>>
/var/spool/cron/[^/]*	--	<<none>>
/tmp/\.X11-unix/.*	-s	<<none>>
/run	-d	system_u:object_r:var_run_t:s0
/etc/shadow.*	--	system_u:object_r:shadow_t:s0
/broken(	<<none>>
`

const sampleSubs = `# base path aliases
/var/run /run
/lib /usr/lib
`

func TestPolicyUnlabelled(t *testing.T) {
	none, skipped := parseNoneSpecs(sampleFileContexts)
	if len(none) != 7 || !slices.Equal(skipped, []string{"/broken("}) {
		t.Fatalf("%d <<none>> entries, skipped %q; want 7 and /broken(", len(none), skipped)
	}
	subs := parseSubs(sampleSubs)
	if !slices.Equal(subs, [][2]string{{"/var/run", "/run"}, {"/lib", "/usr/lib"}}) {
		t.Fatalf("subs %q", subs)
	}
	p := policyUnlabelled{none: none, subs: subs}
	for _, c := range []struct {
		path string
		mode fs.FileMode
		want bool
	}{
		{"/proc", fs.ModeDir, true},
		{"/proc", 0, false}, // -d only
		{"/proc/self", fs.ModeDir, false},
		{"/run", fs.ModeDir, false},
		{"/run/lock", fs.ModeDir, true},
		{"/var/run/lock", fs.ModeDir, true}, // through the alias
		{"/var/runx", fs.ModeDir, false},    // not an alias of /run
		{"/lost+found", fs.ModeDir, false},
		{"/lost+found/#12", 0, true},
		{"/run/user/0/x", 0, true}, // /run/.*
		{"/var/spool/cron/root", 0, true},
		{"/var/spool/cron/root", fs.ModeDir, false},
		{"/var/spool/cron/crontabs/root", 0, false},
		{"/tmp/.X11-unix/X0", fs.ModeSocket, true},
		{"/etc/shadow", 0, false},
		{"/broken(", 0, false},
		{"/", fs.ModeDir, false},
	} {
		if got := p.leaves(c.path, c.mode); got != c.want {
			t.Errorf("leaves(%q, %v) = %v, want %v", c.path, c.mode, got, c.want)
		}
	}
	for kind, mode := range map[string]fs.FileMode{
		"--": 0, "-d": fs.ModeDir, "-l": fs.ModeSymlink, "-c": fs.ModeDevice | fs.ModeCharDevice,
		"-b": fs.ModeDevice, "-s": fs.ModeSocket, "-p": fs.ModeNamedPipe,
	} {
		if !kindMatches(kind, mode) || !kindMatches("", mode) {
			t.Errorf("%s does not match %v", kind, mode)
		}
		if kind != "--" && kindMatches("--", mode) {
			t.Errorf("-- matches %v", mode)
		}
	}
}

// TestCountLabels labels a small tree by hand and counts it. Writing
// security.selinux needs CAP_SYS_ADMIN and, on a host that runs SELinux, a
// label its policy knows: elsewhere the test skips.
func TestCountLabels(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proc", "run/lock", "etc", "lost+found"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"etc/shadow", "etc/hosts", "run/lock/x", "lost+found/#12"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/run", filepath.Join(root, "var-run")); err != nil {
		t.Fatal(err)
	}
	label := []byte("system_u:object_r:etc_t:s0\x00")
	for _, p := range []string{".", "etc", "etc/shadow", "run", "lost+found", "var-run"} {
		if err := unix.Lsetxattr(filepath.Join(root, p), "security.selinux", label, 0); err != nil {
			if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
				t.Skipf("cannot write security.selinux here: %v", err)
			}
			t.Fatal(err)
		}
	}
	none, _ := parseNoneSpecs(sampleFileContexts)
	c, err := countLabels(root, policyUnlabelled{none: none})
	if err != nil {
		t.Fatal(err)
	}
	// unlabelled: proc (-d <<none>>), run/lock and run/lock/x (/run/.*),
	// lost+found/#12; etc/hosts is a stray
	if c.labelled != 6 || c.none != 4 || !slices.Equal(c.stray, []string{"/etc/hosts"}) {
		t.Errorf("labelled %d, none %d, stray %q; want 6, 4, [/etc/hosts]", c.labelled, c.none, c.stray)
	}
	if l, err := selinuxLabel(filepath.Join(root, "etc/shadow")); err != nil || l != "system_u:object_r:etc_t:s0" {
		t.Errorf("selinuxLabel = %q, %v", l, err)
	}
}
