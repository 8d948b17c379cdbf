package hostos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The files sort in fapolicyd's 80 group, as rke2's, not among the 30
// patterns before 40-bad-elf.rules, and before 90-deny-execute.
func TestFapolicydFileNumbers(t *testing.T) {
	for _, f := range []string{FapolicydRulesFile, FapolicydExecutableFile} {
		if !strings.HasPrefix(f, "8") || f >= "90-deny-execute.rules" || f <= "40-bad-elf.rules" {
			t.Errorf("%s: want a name in the 80 group", f)
		}
	}
}

// An installed binary is not in the rpm database fapolicyd trusts: it gets
// an execute allow by path, the files of earlier releases are removed, and
// a second apply changes nothing.
func TestFapolicydTrustsInstalledBinaries(t *testing.T) {
	ctx := context.Background()
	stubs, dir := fapolicydHost(t, "active", "fapolicyd|0:1.3.2-1.el9|x86_64\n")
	r := stubs.Runner()
	for _, old := range LegacyFapolicydFiles {
		if err := os.WriteFile(filepath.Join(dir, old), []byte("allow perm=any all : dir=/opt/cni/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step := Fapolicyd{Configurer: EnterpriseLinux{}, Rules: rke2Rules, Trusted: []string{"/usr/local/bin/k3s", "/usr/local/bin/k3s-killall.sh"}, Dir: dir}
	c, err := step.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FapolicydExecutableFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Executables cargoship installs\nallow perm=execute all : path=/usr/local/bin/k3s\nallow perm=execute all : path=/usr/local/bin/k3s-killall.sh\n"
	if string(b) != want {
		t.Errorf("%s = %q, want %q", FapolicydExecutableFile, b, want)
	}
	for _, old := range LegacyFapolicydFiles {
		if _, err := os.Stat(filepath.Join(dir, old)); !os.IsNotExist(err) || !slices.Contains(c.Actions, "remove "+filepath.Join(dir, old)) {
			t.Errorf("%s not removed (%v); actions %q", old, err, c.Actions)
		}
	}
	if !slices.Contains(c.Actions, "fagenrules --load") {
		t.Errorf("actions = %q, want the rules loaded", c.Actions)
	}
	again, err := step.Apply(ctx, r)
	if err != nil || again.Changed() {
		t.Errorf("second apply = %+v %v", again, err)
	}
	if _, err := (Fapolicyd{Configurer: EnterpriseLinux{}, Trusted: []string{"/usr/bin/a b"}, Dir: dir}).Plan(ctx, r); err == nil {
		t.Error("a path with a blank should be refused")
	}
}
