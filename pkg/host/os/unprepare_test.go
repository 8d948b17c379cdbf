package hostos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// preparedHost is a host as the preparation steps leave it, under a temp
// directory: /etc/hosts with the block, the sysctl.d and modules-load.d
// files, both fapolicyd rule files, and the admin's own files beside each,
// which must survive. fapolicyd is a stub answering state and version.
type preparedHost struct {
	stubs                                 *hosttest.Stubs
	rulesDir                              string
	hosts, sysctl, modules                string
	adminSysctl, adminModules, adminRules string
}

func newPreparedHost(t *testing.T, state, version string) *preparedHost {
	t.Helper()
	ctx := context.Background()
	stubs, rulesDir := fapolicydHost(t, state, version)
	etc := filepath.Dir(filepath.Dir(rulesDir))
	h := &preparedHost{
		stubs: stubs, rulesDir: rulesDir,
		hosts:        filepath.Join(etc, "hosts"),
		sysctl:       filepath.Join(etc, "sysctl.d", "90-cargoship.conf"),
		modules:      filepath.Join(etc, "modules-load.d", "cargoship.conf"),
		adminSysctl:  filepath.Join(etc, "sysctl.d", "99-admin.conf"),
		adminModules: filepath.Join(etc, "modules-load.d", "admin.conf"),
		adminRules:   filepath.Join(rulesDir, "21-updaters.rules"),
	}
	r := &hosttest.Local{}
	write := func(p, body string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(h.hosts, debianHosts)
	write(h.adminSysctl, "vm.swappiness = 1\n")
	write(h.adminModules, "wireguard\n")
	write(h.adminRules, "allow perm=any uid=0 : dir=/var/tmp/\n")
	if _, err := (EtcHosts{Entries: nodes, Path: h.hosts}).Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	write(h.sysctl, string(RenderSysctl(map[string]string{"net.ipv4.ip_forward": "1"})))
	write(h.modules, string(RenderModules(DefaultModules)))
	write(filepath.Join(rulesDir, FapolicydRulesFile), rke2Rules+"\n")
	write(filepath.Join(rulesDir, FapolicydExecutableFile), "allow perm=execute all : dir=/usr/local/bin/\n")
	return h
}

func (h *preparedHost) step() Unprepare {
	return Unprepare{Configurer: EnterpriseLinux{}, HostsPath: h.hosts, SysctlPath: h.sysctl, ModulesPath: h.modules, FapolicydDir: h.rulesDir}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestUnprepareRemovesOnlyCargoship: the dry run lists each removal and
// touches nothing; Apply removes cargoship's files and block, reloads a
// running fapolicyd 1.3 (no restart), and leaves the admin's files and
// lines; a second Apply does nothing.
func TestUnprepareRemovesOnlyCargoship(t *testing.T) {
	ctx := context.Background()
	h := newPreparedHost(t, "active", "fapolicyd|0:1.3.3-100.el9|x86_64\n")
	r := h.stubs.Runner()
	step := h.step()
	ruleFiles := []string{filepath.Join(h.rulesDir, FapolicydRulesFile), filepath.Join(h.rulesDir, FapolicydExecutableFile)}
	// fagenrules' copy of the rules it replaced, which then holds ours
	prev := filepath.Join(filepath.Dir(h.rulesDir), "compiled.rules.prev")
	if err := os.WriteFile(prev, []byte("allow perm=execute all : path=/usr/local/bin/k3s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"remove the cargoship block from " + h.hosts,
		"remove " + h.sysctl,
		"remove " + h.modules,
		"remove " + ruleFiles[0],
		"remove " + ruleFiles[1],
		"fagenrules --load",
		"rm -f " + prev + " (fagenrules' copy of the rules with cargoship's)",
	}
	plan, err := step.Plan(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.Actions, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(plan.Actions, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range append([]string{h.sysctl, h.modules}, ruleFiles...) {
		if !exists(p) {
			t.Errorf("Plan removed %s", p)
		}
	}
	for _, c := range calledWith(t, h.stubs) {
		if !strings.HasPrefix(c, "systemctl is-active") && !strings.HasPrefix(c, "rpm -q") {
			t.Errorf("Plan ran %q", c)
		}
	}

	done, err := step.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(done.Actions, "\n") != strings.Join(want, "\n") {
		t.Errorf("apply:\n%s", strings.Join(done.Actions, "\n"))
	}
	for _, p := range append([]string{h.sysctl, h.modules}, ruleFiles...) {
		if exists(p) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range []string{h.adminSysctl, h.adminModules, h.adminRules} {
		if !exists(p) {
			t.Errorf("the admin's %s was removed", p)
		}
	}
	if exists(prev) {
		t.Errorf("%s, holding cargoship's rules, is still there", prev)
	}
	if b, _ := os.ReadFile(h.hosts); string(b) != debianHosts {
		t.Errorf("hosts:\n%s", b)
	}
	calls := calledWith(t, h.stubs)
	if !slices.Contains(calls, "fagenrules --load") || slices.Contains(calls, "systemctl restart fapolicyd") {
		t.Errorf("calls = %q", calls)
	}
	again, err := step.Apply(ctx, r)
	if err != nil || again.Changed() || len(again.Warnings) != 0 {
		t.Errorf("second apply = %+v %v", again, err)
	}
	if n := len(calledWith(t, h.stubs)); n != len(calls) {
		t.Errorf("second apply ran %q", calledWith(t, h.stubs)[len(calls):])
	}
}

// TestUnprepareOldFapolicydRestarts: before 1.3 the daemon is restarted,
// in the dry run's list too; a stopped fapolicyd is neither reloaded nor
// started.
func TestUnprepareOldFapolicydRestarts(t *testing.T) {
	ctx := context.Background()
	h := newPreparedHost(t, "active", "fapolicyd|0:1.1.7-1.el9|x86_64\n")
	step := RemoveFapolicydRules{Configurer: EnterpriseLinux{}, Dir: h.rulesDir}
	plan, err := step.Plan(ctx, h.stubs.Runner())
	if err != nil || len(plan.Actions) != 5 || !strings.HasPrefix(plan.Actions[3], "restart fapolicyd") {
		t.Fatalf("plan = %q %v", plan.Actions, err)
	}
	if c, err := step.Apply(ctx, h.stubs.Runner()); err != nil || len(c.Actions) != 5 {
		t.Fatalf("apply = %q %v", c.Actions, err)
	}
	if calls := calledWith(t, h.stubs); !slices.Contains(calls, "systemctl restart fapolicyd") {
		t.Errorf("calls = %q", calls)
	}

	stopped := newPreparedHost(t, "inactive", "")
	c, err := RemoveFapolicydRules{Configurer: EnterpriseLinux{}, Dir: stopped.rulesDir}.Apply(ctx, stopped.stubs.Runner())
	if err != nil || len(c.Actions) != 2 {
		t.Fatalf("apply with fapolicyd stopped = %+v %v", c, err)
	}
	for _, call := range calledWith(t, stopped.stubs) {
		if call != "systemctl is-active fapolicyd" {
			t.Errorf("ran %q although fapolicyd is not running", call)
		}
	}
}

// TestUnprepareLeavesWhatIsNotOurs: a file at our path without our
// header, a directory where a file was, and a symlink are left alone with
// a warning; a host never prepared plans nothing, with no Configurer.
func TestUnprepareLeavesWhatIsNotOurs(t *testing.T) {
	ctx := context.Background()
	h := newPreparedHost(t, "inactive", "")
	r := h.stubs.Runner()
	if err := os.WriteFile(h.sysctl, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.modules); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.modules, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(h.rulesDir, FapolicydRulesFile)
	if err := os.Remove(rules); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.adminRules, rules); err != nil {
		t.Fatal(err)
	}
	c, err := h.step().Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 3 || len(c.Actions) != 2 { // the hosts block, the executable rules
		t.Errorf("change = %+v", c)
	}
	for _, p := range []string{h.sysctl, filepath.Join(h.modules, "sub"), rules, h.adminRules} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}

	bare := t.TempDir()
	clean := Unprepare{HostsPath: filepath.Join(bare, "hosts"), SysctlPath: filepath.Join(bare, "s.conf"), ModulesPath: filepath.Join(bare, "m.conf"), FapolicydDir: filepath.Join(bare, "rules.d")}
	if err := os.WriteFile(clean.HostsPath, []byte(debianHosts), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := clean.Plan(ctx, &hosttest.Local{}); err != nil || c.Changed() || len(c.Warnings) != 0 {
		t.Errorf("never prepared: %+v %v", c, err)
	}
	fresh := newPreparedHost(t, "active", "")
	if _, err := (RemoveFapolicydRules{Dir: fresh.rulesDir}).Plan(ctx, fresh.stubs.Runner()); err == nil {
		t.Error("rule files to remove and no Configurer to reload with should be an error")
	}
}

// TestRemoveFileVerifies: a removal that leaves the path behind is an
// error naming host and path, and a directory is never removed.
func TestRemoveFileVerifies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// rm that does nothing, as a read-only or immutable file would.
	f := (&hosttest.Fake{Name: "kw9", Else: &hosttest.Local{}}).On("rmdir", "")
	_, err := RemoveFile(ctx, f, p)
	if err == nil || !strings.Contains(err.Error(), "kw9") || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "still there") {
		t.Errorf("a removal that did nothing: %v", err)
	}
	r := &hosttest.Local{}
	if removed, err := RemoveFile(ctx, r, p); err != nil || !removed || exists(p) {
		t.Errorf("remove = %v %v", removed, err)
	}
	if removed, err := RemoveFile(ctx, r, p); err != nil || removed {
		t.Errorf("missing file = %v %v", removed, err)
	}
	if _, err := RemoveFile(ctx, r, dir); err == nil || !exists(dir) {
		t.Errorf("a directory: %v", err)
	}
	dangling := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveFile(ctx, r, dangling); err == nil || !exists(dangling) {
		t.Errorf("a dangling symlink is found and left alone: %v", err)
	}
}
