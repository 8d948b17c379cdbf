package hostos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

func TestForFamily(t *testing.T) {
	for _, fam := range v1alpha1.Families {
		if got := For(OS{Family: fam}).Family(); got != fam {
			t.Errorf("For(%s).Family() = %s", fam, got)
		}
	}
	if For(OS{Family: v1alpha1.FamilyAlpine}).InitSystem() != "openrc" || For(OS{Family: v1alpha1.FamilyDebian}).InitSystem() != "systemd" {
		t.Error("Alpine runs OpenRC, the others systemd")
	}
}

// TestInstallCommandsThroughShell runs every rendered install command in a
// real shell against stub tools: each file must arrive as one argument and
// the repository glob must reach the tool unexpanded, even in a directory
// where '*' matches files.
func TestInstallCommandsThroughShell(t *testing.T) {
	files := []string{"/var/lib/k/it's a.rpm", "/var/lib/k/b;reboot.rpm"}
	cases := []struct {
		c    Configurer
		tool string
		want []string
	}{
		{EnterpriseLinux{}, "dnf", []string{"dnf", "-y", "--disablerepo=*", "--setopt=install_weak_deps=False", "install"}},
		{EnterpriseLinux{}, "dnf5", []string{"dnf5", "--disable-repo=*", "-y", "--setopt=install_weak_deps=False", "install"}},
		{EnterpriseLinux{}, "yum", []string{"yum", "-y", "--disablerepo=*", "install"}},
		{EnterpriseLinux{}, "rpm", []string{"rpm", "-Uvh"}},
		{Debian{}, "apt-get", []string{"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y",
			"-o", "Dir::State::Lists=" + AptEmptyLists, "-o", "Dir::Etc::SourceList=/dev/null", "-o", "Dir::Etc::SourceParts=/dev/null",
			"-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"}},
		{SUSE{}, "zypper", []string{"zypper", "-n", "--no-remote", "--no-refresh", "install", "--allow-unsigned-rpm"}},
		{SUSE{}, "rpm", []string{"rpm", "-Uvh"}},
		{Alpine{}, "apk", []string{"apk", "add", "--no-network", "--allow-untrusted"}},
	}
	for _, c := range cases {
		t.Run(c.c.Family()+"/"+c.tool, func(t *testing.T) {
			dir := t.TempDir()
			stubs, err := hosttest.NewStubs(dir, "dnf", "dnf5", "yum", "rpm", "env", "zypper", "apk")
			if err != nil {
				t.Fatal(err)
			}
			// env is stubbed too: record it instead of running apt-get.
			cmd, err := c.c.InstallCommand(c.tool, files)
			if err != nil {
				t.Fatal(err)
			}
			r := stubs.Runner()
			if _, err := r.Run(context.Background(), "cd "+dir+" && "+cmd); err != nil {
				t.Fatal(err)
			}
			calls, _ := stubs.Calls()
			want := append(append([]string{}, c.want...), files...)
			if c.tool == "dnf5" && len(calls) == 2 && reflect.DeepEqual(calls[0], dnf5Probe) {
				calls = calls[1:] // the repository probe, see TestDnf5WithoutRepositories
			}
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
				t.Errorf("argv = %q\nwant   %q", calls, want)
			}
		})
	}
}

var dnf5Probe = []string{"dnf5", "-q", "--disable-repo=*", "repo", "list"}

// dnf5 exits 2 on --disable-repo='*' when no repository file exists, as
// on many air-gapped hosts: the install then goes without the option,
// and with it whenever repositories are configured.
func TestDnf5WithoutRepositories(t *testing.T) {
	for probeExit, want := range map[int][]string{
		0: {"dnf5", "--disable-repo=*", "-y", "--setopt=install_weak_deps=False", "install", "/r/a.rpm"},
		2: {"dnf5", "-y", "--setopt=install_weak_deps=False", "install", "/r/a.rpm"},
	} {
		stubs, err := hosttest.NewStubs(t.TempDir(), "dnf5")
		if err != nil {
			t.Fatal(err)
		}
		if err := stubs.SetFor("dnf5", "-q", "No matching repositories for \"*\"", probeExit); err != nil {
			t.Fatal(err)
		}
		cmd, err := EnterpriseLinux{}.InstallCommand("dnf5", []string{"/r/a.rpm"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stubs.Runner().Run(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
		calls, _ := stubs.Calls()
		if len(calls) != 2 || !reflect.DeepEqual(calls[0], dnf5Probe) || !reflect.DeepEqual(calls[1], want) {
			t.Errorf("probe exit %d: argv = %q, want the probe then %q", probeExit, calls, want)
		}
	}
}

func TestInstallCommandRefuses(t *testing.T) {
	if _, err := (Debian{}).InstallCommand("apt-get", []string{"kubelet.deb"}); err == nil {
		t.Error("a relative path would make apt-get download a package of that name")
	}
	if _, err := (EnterpriseLinux{}).InstallCommand("dnf", nil); err == nil {
		t.Error("no files is an error, not `dnf install` with nothing")
	}
	if _, err := (Debian{}).InstallCommand("", []string{"/a.deb"}); err == nil {
		t.Error("no tool is an error")
	}
	if _, err := (Other{}).InstallCommand("rpm", []string{"/a.rpm"}); err == nil {
		t.Error("the binary-route family installs no packages")
	}
}

// TestDebianRealDpkg builds a .deb and reads it back with this machine's
// dpkg-deb, then queries dpkg for a package that is installed and one
// that is not.
func TestDebianRealDpkg(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("no dpkg-deb here")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkg", "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: cargoship-dummy\nVersion: 1:1.35.3-1.1\nArchitecture: all\nMaintainer: t <t@example.com>\nDescription: test\n"
	if err := os.WriteFile(filepath.Join(dir, "pkg", "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(dir, "dummy file.deb")
	if out, err := exec.Command("dpkg-deb", "--build", filepath.Join(dir, "pkg"), deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v %s", err, out)
	}
	r := &hosttest.Local{}
	p, err := Debian{}.PackageFile(ctx, r, deb)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Package{Name: "cargoship-dummy", Version: "1:1.35.3-1.1", Arch: "all"}); p != want {
		t.Errorf("PackageFile = %+v, want %+v", p, want)
	}
	if got, err := (Debian{}).Installed(ctx, r, "cargoship-dummy"); err != nil || len(got) != 0 {
		t.Errorf("not installed: %v %v", got, err)
	}
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}|${Architecture}", "dpkg").Output()
	if err != nil {
		t.Fatal(err)
	}
	ver, arch, _ := strings.Cut(string(out), "|")
	got, err := Debian{}.Installed(ctx, r, "dpkg")
	if err != nil || len(got) != 1 || got[0] != (Package{Name: "dpkg", Version: ver, Arch: arch}) {
		t.Errorf("Installed(dpkg) = %+v %v, want %s %s", got, err, ver, arch)
	}
}

// TestDebianRemovedNotPurged: dpkg-query exits 0 for "rc" packages, so the
// status letters decide (docs/reference/hosts.md §2.4).
func TestDebianRemovedNotPurged(t *testing.T) {
	f := (&hosttest.Fake{}).On("dpkg-query", "rc |kubelet|1.35.3-1.1|amd64\nii |kubelet|1.35.2-1.1|i386\n")
	got, err := Debian{}.Installed(context.Background(), f, "kubelet")
	if err != nil || len(got) != 1 || got[0].Version != "1.35.2-1.1" {
		t.Errorf("Installed = %+v %v", got, err)
	}
}

// TestRPMParsing uses the output shapes of docs/reference/hosts.md §2.3.
func TestRPMParsing(t *testing.T) {
	ctx := context.Background()
	f := (&hosttest.Fake{}).
		On("rpm -qp", "warning: /x.rpm: Header V4 RSA/SHA256 Signature, key ID abc: NOKEY\ncontainerd.io|0:2.2.2-1.el9|x86_64\n").
		On("rpm -q ", "kernel|0:5.14.0-1.el9|x86_64\nkernel|0:5.14.0-2.el9|x86_64\n")
	p, err := EnterpriseLinux{}.PackageFile(ctx, f, "/x.rpm")
	if err != nil || p != (Package{"containerd.io", "0:2.2.2-1.el9", "x86_64"}) {
		t.Errorf("PackageFile = %+v %v", p, err)
	}
	got, err := SUSE{}.Installed(ctx, f, "kernel")
	if err != nil || len(got) != 2 {
		t.Errorf("Installed = %+v %v", got, err)
	}
	none := (&hosttest.Fake{}).On("rpm -q ", "package kubelet is not installed\n")
	if got, err := (EnterpriseLinux{}).Installed(ctx, none, "kubelet"); err != nil || len(got) != 0 {
		t.Errorf("not installed: %+v %v", got, err)
	}
	bad := (&hosttest.Fake{}).On("rpm -qp", "error: open of /x.rpm failed\n")
	if _, err := (EnterpriseLinux{}).PackageFile(ctx, bad, "/x.rpm"); err == nil {
		t.Error("unreadable package file should be an error")
	}
}

// TestAlpineReal builds an .apk-shaped archive and an installed database
// and reads both through a real shell, tar and awk.
func TestAlpineReal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pkginfo := "# Generated by abuild\npkgname = containerd\npkgver = 2.1.4-r1\narch = x86_64\n"
	if err := os.WriteFile(filepath.Join(dir, ".PKGINFO"), []byte(pkginfo), 0o644); err != nil {
		t.Fatal(err)
	}
	apk := filepath.Join(dir, "containerd-2.1.4-r1.apk")
	if out, err := exec.Command("tar", "-czf", apk, "-C", dir, ".PKGINFO").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	r := &hosttest.Local{}
	p, err := Alpine{}.PackageFile(ctx, r, apk)
	if err != nil || p != (Package{"containerd", "2.1.4-r1", "x86_64"}) {
		t.Errorf("PackageFile = %+v %v", p, err)
	}
	db := filepath.Join(dir, "installed")
	if err := os.WriteFile(db, []byte("C:Q1abc=\nP:busybox\nV:1.37.0-r19\nA:x86_64\n\nC:Q1def=\nP:containerd\nV:2.1.3-r0\nA:x86_64\nT:daemon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := apkQuery(ctx, r, "containerd", db)
	if err != nil || len(got) != 1 || got[0] != (Package{"containerd", "2.1.3-r0", "x86_64"}) {
		t.Errorf("apkQuery = %+v %v", got, err)
	}
	if got, err := apkQuery(ctx, r, "busy", db); err != nil || len(got) != 0 {
		t.Errorf("a prefix is not a package: %+v %v", got, err)
	}
	if got, err := apkQuery(ctx, r, "x", filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("no database: %+v %v", got, err)
	}
}

func TestSELinuxMode(t *testing.T) {
	ctx := context.Background()
	for out, want := range map[string]string{"Enforcing\n": "enforcing", "Permissive\n": "permissive", "Disabled\n": "disabled"} {
		got, err := EnterpriseLinux{}.SELinuxMode(ctx, (&hosttest.Fake{}).On("getenforce", out))
		if err != nil || got != want {
			t.Errorf("%q: %s %v", out, got, err)
		}
	}
	if _, err := (EnterpriseLinux{}).SELinuxMode(ctx, (&hosttest.Fake{}).On("getenforce", "")); err == nil {
		t.Error("no answer should be an error")
	}
	if _, err := exec.LookPath("getenforce"); err != nil {
		if _, err := os.Stat("/sys/fs/selinux/enforce"); os.IsNotExist(err) {
			got, err := Debian{}.SELinuxMode(ctx, &hosttest.Local{})
			if err != nil || got != "disabled" {
				t.Errorf("this machine has no SELinux: %s %v", got, err)
			}
		}
	}
}

func TestSystemd(t *testing.T) {
	ctx := context.Background()
	s := Systemd{}
	if cmd, err := s.ServiceCommand("restart", "fapolicyd"); err != nil || cmd != "systemctl restart fapolicyd" {
		t.Errorf("ServiceCommand = %q %v", cmd, err)
	}
	for _, bad := range [][2]string{{"start", "a;reboot"}, {"start", ""}, {"mask", "k3s"}} {
		if _, err := s.ServiceCommand(bad[0], bad[1]); err == nil {
			t.Errorf("ServiceCommand(%q, %q) should fail", bad[0], bad[1])
		}
	}
	for out, want := range map[string]bool{"active\n": true, "inactive\n": false, "activating\n": false, "failed\n": false} {
		got, err := s.ServiceActive(ctx, (&hosttest.Fake{}).On("is-active", out), "k3s")
		if err != nil || got != want {
			t.Errorf("%q: %v %v", out, got, err)
		}
	}
	if _, err := s.ServiceActive(ctx, (&hosttest.Fake{}).On("is-active", "System has not been booted with systemd as init system (PID 1). Can't operate.\n"), "k3s"); err == nil {
		t.Error("a non-systemd host should be an error, not inactive")
	}
}

// TestOpenRCStatusCodes maps rc-service exit codes through a real shell.
func TestOpenRCStatusCodes(t *testing.T) {
	stubs, err := hosttest.NewStubs(t.TempDir(), "rc-service")
	if err != nil {
		t.Fatal(err)
	}
	r := stubs.Runner()
	if err := stubs.SetFor("rc-service", "-e", "", 0); err != nil {
		t.Fatal(err)
	}
	for code, want := range map[int]string{0: "active", 3: "inactive", 4: "deactivating", 8: "activating", 16: "inactive", 32: "failed"} {
		if err := stubs.Set("rc-service", "", code); err != nil {
			t.Fatal(err)
		}
		got, err := OpenRC{}.ServiceState(context.Background(), r, "k3s")
		if err != nil || got != want {
			t.Errorf("exit %d: %s %v", code, got, err)
		}
	}
	// A service OpenRC does not know is inactive, whatever status says.
	if err := stubs.SetFor("rc-service", "-e", "", 1); err != nil {
		t.Fatal(err)
	}
	if err := stubs.Set("rc-service", "", 0); err != nil {
		t.Fatal(err)
	}
	if got, err := (OpenRC{}).ServiceState(context.Background(), r, "nope"); err != nil || got != "inactive" {
		t.Errorf("unknown service: %s %v", got, err)
	}
	if cmd, _ := (OpenRC{}).ServiceCommand("enable", "k3s"); cmd != "rc-update add k3s default" {
		t.Errorf("enable = %q", cmd)
	}
}

// TestRemoveCommandsThroughShell runs every rendered remove command in a
// real shell against stub tools: the names arrive as given, after the
// option that ends the options where the tool has one.
func TestRemoveCommandsThroughShell(t *testing.T) {
	names := []string{"rke2-server", "rke2-common"}
	cases := []struct {
		c    Configurer
		want []string
	}{
		{EnterpriseLinux{}, []string{"rpm", "-e", "--"}},
		{SUSE{}, []string{"rpm", "-e", "--"}},
		{Debian{}, []string{"env", "DEBIAN_FRONTEND=noninteractive", "dpkg", "--purge", "--"}},
		{Alpine{}, []string{"apk", "del", "--no-network"}},
	}
	for _, c := range cases {
		t.Run(c.c.Family(), func(t *testing.T) {
			stubs, err := hosttest.NewStubs(t.TempDir(), "rpm", "env", "apk")
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := c.c.RemoveCommand(names)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stubs.Runner().Run(context.Background(), cmd); err != nil {
				t.Fatal(err)
			}
			calls, _ := stubs.Calls()
			want := append(append([]string{}, c.want...), names...)
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
				t.Errorf("argv = %q\nwant   %q", calls, want)
			}
		})
	}
}

func TestRemoveCommandRefuses(t *testing.T) {
	for _, names := range [][]string{nil, {"-rf"}, {"a b"}, {"x;reboot"}, {""}} {
		if _, err := (Debian{}).RemoveCommand(names); err == nil {
			t.Errorf("%q: want an error", names)
		}
	}
	if _, err := (Other{}).RemoveCommand([]string{"a"}); err == nil {
		t.Error("Other has no package tool")
	}
}
