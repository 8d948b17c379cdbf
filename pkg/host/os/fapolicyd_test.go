package hostos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

const rke2Rules = `# Allow RKE2 to function
allow perm=any all : dir=/opt/cni/
allow perm=any all : dir=/run/k3s/
allow perm=any all : dir=/var/lib/kubelet/
allow perm=any all : dir=/var/lib/rancher/`

// fapolicydHost is a temporary /etc/fapolicyd with stub fagenrules,
// systemctl and rpm: files are real, the daemon is captured behaviour.
func fapolicydHost(t *testing.T, state, version string) (*hosttest.Stubs, string) {
	t.Helper()
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc", "fapolicyd", "rules.d")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stubs, err := hosttest.NewStubs(bin, "fagenrules", "systemctl", "rpm")
	if err != nil {
		t.Fatal(err)
	}
	if err := stubs.SetFor("systemctl", "is-active", state+"\n", 0); err != nil {
		t.Fatal(err)
	}
	if err := stubs.Set("rpm", version, 0); err != nil {
		t.Fatal(err)
	}
	return stubs, etc
}

func calledWith(t *testing.T, s *hosttest.Stubs) []string {
	t.Helper()
	calls, err := s.Calls()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range calls {
		out = append(out, strings.Join(c, " "))
	}
	return out
}

func TestFapolicydOldVersionRestarts(t *testing.T) {
	ctx := context.Background()
	stubs, dir := fapolicydHost(t, "active", "fapolicyd|0:1.1.7-1.el9|x86_64\n")
	r := stubs.Runner()
	step := Fapolicyd{Configurer: EnterpriseLinux{}, Rules: rke2Rules, Dir: dir}
	plan, err := step.Plan(ctx, r)
	if err != nil || len(plan.Actions) != 1 || len(calledWith(t, stubs)) != 0 {
		t.Fatalf("plan = %+v %v, calls %q", plan, err, calledWith(t, stubs))
	}
	c, err := step.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FapolicydRulesFile))
	if err != nil || string(b) != rke2Rules+"\n" {
		t.Errorf("rules file = %q %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, FapolicydRulesFile)); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, FapolicydExecutableFile)); !os.IsNotExist(err) {
		t.Error("no executable rules: no file")
	}
	calls := calledWith(t, stubs)
	want := []string{"systemctl is-active fapolicyd", "fagenrules --load", "rpm -q --qf %{NAME}|%{EPOCHNUM}:%{VERSION}-%{RELEASE}|%{ARCH}\\n -- fapolicyd", "systemctl restart fapolicyd"}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if len(c.Actions) != 3 {
		t.Errorf("actions = %q", c.Actions)
	}
	// Second run: nothing written, nothing reloaded, nothing restarted.
	if c, err := step.Apply(ctx, r); err != nil || c.Changed() || len(calledWith(t, stubs)) != len(want) {
		t.Errorf("second apply = %+v %v, calls %q", c, err, calledWith(t, stubs))
	}
}

func TestFapolicydNewVersionReloadsOnly(t *testing.T) {
	ctx := context.Background()
	stubs, dir := fapolicydHost(t, "active", "fapolicyd|0:1.3.3-100.el9|x86_64\n")
	if err := os.WriteFile(filepath.Join(dir, FapolicydExecutableFile), []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step := Fapolicyd{Configurer: EnterpriseLinux{}, Rules: rke2Rules, Dir: dir}
	c, err := step.Apply(ctx, stubs.Runner())
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range calledWith(t, stubs) {
		if strings.Contains(call, "restart") {
			t.Error("fapolicyd 1.3 reloads rules on SIGHUP; no restart")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FapolicydExecutableFile)); !os.IsNotExist(err) {
		t.Error("a rule file the distro no longer has must go")
	}
	if len(c.Actions) != 3 { // write, remove, fagenrules
		t.Errorf("actions = %q", c.Actions)
	}
}

func TestFapolicydNotRunningNoRestart(t *testing.T) {
	stubs, dir := fapolicydHost(t, "inactive", "")
	c, err := Fapolicyd{Configurer: EnterpriseLinux{}, Rules: rke2Rules, Dir: dir}.Apply(context.Background(), stubs.Runner())
	if err != nil || len(c.Warnings) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	for _, call := range calledWith(t, stubs) {
		if strings.Contains(call, "restart") || strings.Contains(call, "fagenrules") {
			t.Errorf("ran %q although fapolicyd is not running", call)
		}
	}
}

func TestFapolicydLegacyRulesFile(t *testing.T) {
	stubs, dir := fapolicydHost(t, "active", "")
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "fapolicyd.rules"), []byte("allow perm=any all : all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Fapolicyd{Configurer: EnterpriseLinux{}, Rules: rke2Rules, Dir: dir}).Plan(context.Background(), stubs.Runner()); err == nil || !strings.Contains(err.Error(), "fapolicyd.rules") {
		t.Errorf("legacy rules file: %v", err)
	}
}

func TestReloadsRules(t *testing.T) {
	for v, want := range map[string]bool{"0:1.1.7-1.el9": false, "1.1.7-5": false, "0:1.3.2-1.el9": true, "1.4": true, "2.0.1-1": true, "": false, "x.y": false} {
		if got := reloadsRules(v); got != want {
			t.Errorf("reloadsRules(%q) = %v", v, got)
		}
	}
}
