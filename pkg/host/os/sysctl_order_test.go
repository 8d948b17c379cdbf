package hostos

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// The file must sort after what EL and STIG hosts ship in sysctl.d, or
// their values win at boot (systemd-sysctl compares names byte by byte).
func TestSysctlPathSortsLast(t *testing.T) {
	ours := path.Base(SysctlPath)
	for _, other := range []string{"99-sysctl.conf", "99-stig.conf", "99-kubernetes-cri.conf", "99-protect-links.conf", "90-rke2.conf", "99-z.conf", "zz-stig-hardening.conf", "zz-local.conf"} {
		if ours <= other {
			t.Errorf("%s sorts before %s", ours, other)
		}
	}
	if !strings.HasPrefix(SysctlPath, "/etc/sysctl.d/") || !strings.HasSuffix(ours, ".conf") {
		t.Errorf("SysctlPath = %s: systemd-sysctl reads only *.conf in sysctl.d", SysctlPath)
	}
}

// sysctlDir is a sysctl.d with a legacy cargoship file and a STIG file
// setting ip_forward to 0, and a live kernel answering from the model.
func sysctlDir(t *testing.T) (dir string, step Sysctl, f *hosttest.Fake) {
	dir = t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("90-cargoship.conf", generatedHeader+"net.ipv4.ip_forward = 1\n")
	write("99-stig.conf", "# STIG\nnet.ipv4.ip_forward = 0\n; kernel.panic = 1\nkernel/panic=10\n")
	write("10-low.conf", "net.ipv4.ip_forward=0\n")
	step = Sysctl{Values: map[string]string{"net.ipv4.ip_forward": "1", "kernel.panic": "10"},
		Path:    filepath.Join(dir, "zzz-cargoship.conf"),
		Legacy:  []string{filepath.Join(dir, "90-cargoship.conf")},
		Sources: []string{filepath.Join(dir, "*.conf")}}
	f = (&hosttest.Fake{Else: &hosttest.Local{}}).
		On("sysctl -n", "kernel.panic\tok\trw\t10\nnet.ipv4.ip_forward\tok\trw\t1\n")
	return dir, step, f
}

// An apply removes the file an earlier release wrote, and warns about each
// file setting one of its keys to another value; kernel.panic, set to the
// same value (spelled with slashes), is no conflict.
func TestSysctlMigratesLegacyFileAndWarnsConflicts(t *testing.T) {
	ctx := context.Background()
	dir, step, f := sysctlDir(t)
	plan, err := step.Plan(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "90-cargoship.conf")
	if !slices.Contains(plan.Actions, "remove "+legacy) {
		t.Errorf("plan = %q, want the legacy file removed", plan.Actions)
	}
	if _, err := os.Stat(legacy); err != nil {
		t.Errorf("the plan touched the legacy file: %v", err)
	}
	warned := strings.Join(plan.Warnings, "\n")
	if !strings.Contains(warned, "99-stig.conf sets net.ipv4.ip_forward = 0, not 1: it sorts before zzz-cargoship.conf") ||
		!strings.Contains(warned, "10-low.conf sets net.ipv4.ip_forward = 0") || strings.Contains(warned, "kernel.panic") || len(plan.Warnings) != 2 {
		t.Errorf("warnings = %q", plan.Warnings)
	}
	first, err := step.Apply(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) || !slices.Contains(first.Actions, "remove "+legacy) {
		t.Errorf("legacy file still there (%v), actions %q", err, first.Actions)
	}
	second, err := step.Apply(ctx, f)
	if err != nil || second.Changed() {
		t.Errorf("second apply = %+v, %v", second, err)
	}
}

// A later-sorting file, or /etc/sysctl.conf, wins over ours: the warning
// says so.
func TestSysctlConflictThatWins(t *testing.T) {
	dir, step, f := sysctlDir(t)
	if err := os.WriteFile(filepath.Join(dir, "zzzz-late.conf"), []byte("net.ipv4.ip_forward = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := step.Plan(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), "zzzz-late.conf sets net.ipv4.ip_forward = 0, not 1: it is applied after zzz-cargoship.conf and wins") {
		t.Errorf("warnings = %q", plan.Warnings)
	}
}

// A legacy-named file without cargoship's header is the admin's: kept.
func TestSysctlKeepsForeignLegacyName(t *testing.T) {
	dir, step, f := sysctlDir(t)
	legacy := filepath.Join(dir, "90-cargoship.conf")
	if err := os.WriteFile(legacy, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := step.Apply(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); err != nil {
		t.Errorf("the admin's file was removed: %v", err)
	}
}
