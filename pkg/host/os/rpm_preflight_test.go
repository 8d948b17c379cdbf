package hostos

import (
	"context"
	"strings"
	"testing"
)

// What dnf 4 prints for k3s-selinux without container-selinux, every
// repository disabled (the shape of libdnf's problem report).
const dnfMissingContainerSELinux = `Error: 
 Problem: conflicting requests
  - nothing provides container-selinux >= 3:2.191.0-1 needed by k3s-selinux-1.6-1.el9.noarch from @commandline
(try to add '--skip-broken' to skip uninstallable packages or '--nobest' to use not only best candidate packages)`

func k3sSELinuxHost() *fakeRPM {
	f := &fakeRPM{installed: map[string]string{}, files: map[string]string{"/r/k3s-selinux.rpm": "k3s-selinux|0:1.6-1.el9|noarch"}}
	f.onInstall = func(files []string) error {
		f.installed["k3s-selinux"] = f.files["/r/k3s-selinux.rpm"]
		return nil
	}
	return f
}

// A transaction whose dependencies are neither installed nor uploaded is
// refused before anything is installed, naming what is missing.
func TestPackagesResolveOfflineFirst(t *testing.T) {
	f := k3sSELinuxHost()
	f.resolveOut = dnfMissingContainerSELinux
	_, err := Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/k3s-selinux.rpm"}}.Apply(context.Background(), f.host())
	if err == nil || !strings.Contains(err.Error(), "nothing provides container-selinux >= 3:2.191.0-1 needed by k3s-selinux-1.6-1.el9.noarch") {
		t.Fatalf("err = %v, want the missing container-selinux named", err)
	}
	if len(f.installs) != 0 || f.resolves != 1 {
		t.Errorf("installs %q, resolves %d: want one resolve and no install", f.installs, f.resolves)
	}
	// Resolvable: dnf --assumeno shows the transaction and aborts.
	f.resolveOut = "Installing:\n k3s-selinux noarch 1.6-1.el9 @commandline 21 k\nOperation aborted."
	if _, err := (Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/k3s-selinux.rpm"}}).Apply(context.Background(), f.host()); err != nil || len(f.installs) != 1 {
		t.Errorf("resolvable transaction: %v, installs %q", err, f.installs)
	}
}

// A STIG host (localpkg_gpgcheck=1) refuses files whose key was never
// imported: without a carried key the apply says so before installing;
// with one it imports the key first.
func TestPackagesLocalpkgGPGCheck(t *testing.T) {
	ctx := context.Background()
	f := k3sSELinuxHost()
	f.gpgcheck = "1"
	step := Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/k3s-selinux.rpm"}}
	_, err := step.Apply(ctx, f.host())
	if err == nil || !strings.Contains(err.Error(), "localpkg_gpgcheck=1") || !strings.Contains(err.Error(), "carries no signing key") || !strings.Contains(err.Error(), "/r/k3s-selinux.rpm") {
		t.Fatalf("err = %v", err)
	}
	if len(f.installs) != 0 {
		t.Fatalf("installed despite the signature check: %q", f.installs)
	}
	step.Keys = []string{"/etc/pki/rpm-gpg/RPM-GPG-KEY-rancher"}
	if _, err := step.Apply(ctx, f.host()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.imported, " ") != "/etc/pki/rpm-gpg/RPM-GPG-KEY-rancher" || len(f.installs) != 1 {
		t.Errorf("imported %q, installs %q", f.imported, f.installs)
	}
}

func TestUnresolvedLinesOfEachSolver(t *testing.T) {
	for name, c := range map[string]struct{ out, want string }{
		"dnf5": {"Failed to resolve the transaction:\nProblem: conflicting requests\n  - nothing provides libnftnl needed by rke2-common-1.35.4~rke2r1-0.el9.x86_64 from @commandline\n", "nothing provides libnftnl needed by rke2-common-1.35.4~rke2r1-0.el9.x86_64 from @commandline"},
		"yum3": {"Error: Package: k3s-selinux-1.6-1.el7.noarch (/k3s-selinux-1.6-1.el7.noarch)\n           Requires: container-selinux >= 2:2.107-3\n", "container-selinux >= 2:2.107-3 needed by k3s-selinux-1.6-1.el7.noarch (/k3s-selinux-1.6-1.el7.noarch)"},
		"rpm":  {"error: Failed dependencies:\n\tcontainer-selinux >= 3:2.191.0-1 is needed by k3s-selinux-1.6-1.el9.noarch\n", "container-selinux >= 3:2.191.0-1 is needed by k3s-selinux-1.6-1.el9.noarch"},
		"ok":   {"Dependencies resolved.\nOperation aborted.\n", ""},
	} {
		if got := strings.Join(unresolvedLines(c.out), "; "); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// Phase 9 installs the policy rpms first; the host's other rpms come later.
// The offline check covers both, so a dependency rke2-common lacks stops
// the apply before even the policy is installed; only Files are installed.
func TestPackagesResolveWithLaterFiles(t *testing.T) {
	f := k3sSELinuxHost()
	f.files["/r/rke2-common.rpm"] = "rke2-common|0:1.35.4~rke2r1-0.el9|x86_64"
	f.resolveOut = "Dependencies resolved.\nOperation aborted."
	h := f.host()
	step := Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/k3s-selinux.rpm"}, ResolveWith: []string{"/r/rke2-common.rpm"}}
	if _, err := step.Apply(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	resolved := false
	for _, c := range h.Commands() {
		if strings.Contains(c, "--assumeno") {
			resolved = strings.Contains(c, "/r/k3s-selinux.rpm") && strings.Contains(c, "/r/rke2-common.rpm")
		}
	}
	if !resolved || len(f.installs) != 1 || strings.Join(f.installs[0], " ") != "/r/k3s-selinux.rpm" {
		t.Errorf("resolved both: %v; installs %q, want only the policy", resolved, f.installs)
	}
}
