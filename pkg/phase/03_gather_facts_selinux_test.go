package phase

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// factsWith runs the real facts script on this machine with extra
// commands (name -> shell body) first on PATH.
func factsWith(t *testing.T, tools map[string]string) string {
	t.Helper()
	if _, err := os.Stat("/sys/fs/selinux/enforce"); err == nil {
		t.Skip("this machine has selinuxfs, which the script reads first")
	}
	for _, real := range []string{"getenforce", "sestatus"} {
		if _, err := exec.LookPath(real); err == nil {
			t.Skipf("this machine has %s", real)
		}
	}
	dir := t.TempDir()
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", factsScript)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func selinuxFact(t *testing.T, out string) string {
	h := &node.Host{Spec: &v1alpha1.Host{SSH: &v1alpha1.SSH{Address: "10.0.0.1"}, Hostname: "h", PrivateAddress: "10.0.0.1"}}
	if err := applyFacts(h, out+"\naddr=eth0 10.0.0.1/24\n"); err != nil {
		t.Fatal(err)
	}
	return h.Facts.SELinux
}

// A minimal EL host has sestatus (policycoreutils) but not getenforce
// (libselinux-utils): the mode still comes through.
func TestFactsSELinuxWithoutGetenforce(t *testing.T) {
	out := factsWith(t, map[string]string{"sestatus": `printf 'SELinux status:                 enabled\nCurrent mode:                   enforcing\nMode from config file:          enforcing\n'`})
	if got := selinuxFact(t, out); got != "enforcing" {
		t.Errorf("selinux = %q from sestatus, want enforcing", got)
	}
	out = factsWith(t, map[string]string{"sestatus": `echo 'SELinux status:                 disabled'`})
	if got := selinuxFact(t, out); got != "disabled" {
		t.Errorf("selinux = %q from a disabled sestatus, want disabled", got)
	}
	if got := selinuxFact(t, factsWith(t, map[string]string{"getenforce": "echo Permissive"})); got != "permissive" {
		t.Errorf("selinux = %q from getenforce, want permissive", got)
	}
	if got := selinuxFact(t, factsWith(t, nil)); got != "absent" {
		t.Errorf("selinux = %q with no tool and no selinuxfs, want absent", got)
	}
}
