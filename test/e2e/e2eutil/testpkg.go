// Package e2eutil holds what cargoship's end-to-end suites share: the test
// package they apply (the test engine in place of k3s), an inspector that
// reads hosts over connections of its own, whole runs the way the CLI makes
// them, and the convergence check (docs/e2e.md).
package e2eutil

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	testengine "github.com/colonel-byte/cargoship/test/engine"
)

// Versions of the test engine the walks install and upgrade to.
const (
	EngineVersion      = "1.35.3-k3s1"
	EngineVersionBuilt = "v1.35.3+k3s1"
	UpgradeVersion     = "1.35.4-k3s1"
	UpgradeBuilt       = "v1.35.4+k3s1"
)

// Distro is the engine a test package carries the test engine as, with the
// versions the walks install and upgrade to. Everything else the suites
// assert about the engine (paths, units, ports) comes from Engine
// (docs/e2e.md, "The test engine").
type Distro struct {
	// Name is the definition's spec.type: k3s or rke2.
	Name string
	// Version and Built are the release installed, as a definition and as
	// the binary reports it; Upgrade and UpgradeBuilt the one upgraded to.
	Version, Built, Upgrade, UpgradeBuilt string
}

// The distros the test engine can stand in for.
var (
	K3s  = Distro{Name: "k3s", Version: EngineVersion, Built: EngineVersionBuilt, Upgrade: UpgradeVersion, UpgradeBuilt: UpgradeBuilt}
	RKE2 = Distro{Name: "rke2", Version: "1.35.3-rke2r1", Built: "v1.35.3+rke2r1", Upgrade: "1.35.4-rke2r1", UpgradeBuilt: "v1.35.4+rke2r1"}
)

// Engine is cargoship's engine for the distro: the facts (paths, units,
// ports, kubectl) the assertions derive from.
func (d Distro) Engine() engine.Engine {
	e, err := engine.For(d.Name)
	if err != nil {
		panic(err) // K3s and RKE2 are both engines cargoship has
	}
	return e
}

// KubeVersion is the Kubernetes version of a definition version:
// 1.35.3-k3s1 and 1.35.3-rke2r1 are both 1.35.3.
func KubeVersion(version string) string {
	v, _, _ := strings.Cut(version, "-")
	return v
}

// TestPackage is a package built for the suites: the test engine in place of
// k3s or rke2 (a test double: no engine binary can be downloaded here), its
// units, a real .deb for the workers' APT route, a common file, and an
// image pulled from an in-process registry. Two builds at one version are
// the same bytes.
type TestPackage struct {
	Path    string
	Version string
	// Distro is the engine the package installs.
	Distro Distro
	// Image is the image reference the package carries.
	Image string
	// Files are the definition's targets by what they are, for assertions.
	MOTD, Binary, Deb string
}

// buildTestEngine builds the test engine stamped with version as the
// distro's engine.
func buildTestEngine(t testing.TB, dir, distro, version string) string {
	t.Helper()
	bin, err := testengine.Build(context.Background(), dir, testengine.Binary{Engine: distro, Version: version})
	if err != nil {
		t.Fatalf("building the test engine: %v", err)
	}
	return bin
}

// layoutFile is one file of the test engine's install layout, with the
// local source the definition points at.
type layoutFile struct {
	testengine.File
	local string // path relative to the definition directory
}

// stageLayout copies every file of the distro's layout beside the
// definition: the engine binary, the real kubectl the engine runs, units
// and scripts.
func stageLayout(t testing.TB, dir, distro, bin string) []layoutFile {
	t.Helper()
	files, err := testengine.Layout(distro)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("the test package carries this machine's kubectl: %v", err)
	}
	var out []layoutFile
	for i, f := range files {
		var body []byte
		switch f.Source {
		case testengine.SourceBinary:
			body, err = os.ReadFile(bin)
		case testengine.SourceKubectl:
			body, err = os.ReadFile(kubectl)
		default:
			body, err = testengine.Unit(f.Source)
		}
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join("layout", fmt.Sprintf("%02d-%s", i, filepath.Base(f.Target)))
		if err := os.WriteFile(filepath.Join(dir, local), body, f.Mode); err != nil {
			t.Fatal(err)
		}
		out = append(out, layoutFile{File: f, local: local})
	}
	return out
}

// buildDeb makes a real Debian package with dpkg-deb holding the layout's
// agent files, so a worker's APT route installs the engine with apt; with
// server, the server's files instead, for controllers on the APT route.
func buildDeb(t testing.TB, dir, distro, debVersion string, layout []layoutFile, server bool) string {
	t.Helper()
	role, skip := "agent", testengine.RoleServer
	if server {
		role, skip = "server", testengine.RoleAgent
	}
	root := filepath.Join(dir, "debroot-"+role)
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: cargoship-e2e-" + role + "\nVersion: " + debVersion + "\nArchitecture: amd64\nMaintainer: cargoship <e2e@cargoship.invalid>\nDescription: test double of a " + distro + " " + role + " for cargoship's e2e suite\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range layout {
		if f.Role == skip {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, f.local))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, f.Target)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, f.Mode); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "cargoship-e2e-"+role+"_"+debVersion+"_amd64.deb")
	// SOURCE_DATE_EPOCH dates the ar members and clamps every tar entry's
	// mtime, so the .deb of two runs is the same bytes.
	cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, out)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", BuildTime.Unix()))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, b)
	}
	return out
}

// PackageFile is one more file of spec.config.files a suite adds to the
// test package, sent to every host.
type PackageFile struct {
	Target string
	Perm   os.FileMode
	Data   []byte
}

// BuildTestPackage builds a k3s test package; see BuildDistroPackage.
func BuildTestPackage(t testing.TB, version, builtVersion string, extra ...PackageFile) *TestPackage {
	t.Helper()
	return BuildDistroPackage(t, K3s, version, builtVersion, extra...)
}

// BuildDistroPackage writes the suite's definition for the distro and
// creates the package with cargoship's own create. Controllers take the
// binary route: the package has no .deb for them. Workers take the APT
// route: a .deb with the agent's files, installed by apt from the uploaded
// file. extra are more common files, after the suite's own.
func BuildDistroPackage(t testing.TB, d Distro, version, builtVersion string, extra ...PackageFile) *TestPackage {
	t.Helper()
	return BuildDistroPackageWith(t, d, version, builtVersion, PackageOptions{Extra: extra})
}

// PackageOptions are what a suite adds to the test package.
type PackageOptions struct {
	// Extra are more common files, after the suite's own.
	Extra []PackageFile
	// ControllerDebs are .deb files (local paths) the package carries for
	// controllers on the APT route, e.g. keepalived and what it needs.
	ControllerDebs []string
	// Distro is YAML appended under the definition's spec.config, indented
	// by four spaces (vip settings, say).
	Config string
}

// BuildDistroPackageWith is BuildDistroPackage with more in the package.
func BuildDistroPackageWith(t testing.TB, d Distro, version, builtVersion string, o PackageOptions) *TestPackage {
	t.Helper()
	extra := o.Extra
	dir := t.TempDir()
	for _, d := range []string{"bin", "layout", "files"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildTestEngine(t, filepath.Join(dir, "bin"), d.Name, builtVersion)
	layout := stageLayout(t, dir, d.Name, bin)
	if err := os.WriteFile(filepath.Join(dir, "files/motd"), []byte("managed by cargoship's e2e suite\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files/"+CNIManifest), []byte(cniManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files/"+SELinuxModule+".cil"), []byte(selinuxModuleCIL), 0o644); err != nil {
		t.Fatal(err)
	}
	var files strings.Builder
	for i, f := range extra {
		local := fmt.Sprintf("files/extra-%02d-%s", i, filepath.Base(f.Target))
		if err := os.WriteFile(filepath.Join(dir, local), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&files, "      - source: %s\n        target: %s\n        perm: \"%04o\"\n", local, f.Target, f.Perm)
	}
	// 1.35.3-k3s1 and 1.35.3-rke2r1 as Debian versions are 1.35.3-1: a
	// Debian revision starts with a digit.
	kube, rel, _ := strings.Cut(version, "-")
	debVersion := kube + "-" + strings.TrimPrefix(strings.TrimPrefix(rel, d.Name), "r")
	deb := buildDeb(t, dir, d.Name, debVersion, layout, false)
	transport, stop, err := serveTestImage()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	var osFiles strings.Builder
	// Controllers take the APT route too when the package carries .debs
	// for them: a host takes one route (docs/apply.md, Install routes), so
	// their engine comes as a .deb beside keepalived's.
	controllersAPT := len(o.ControllerDebs) > 0
	if controllersAPT {
		server := buildDeb(t, dir, d.Name, debVersion, layout, true)
		o.ControllerDebs = append([]string{server}, o.ControllerDebs...)
	}
	for _, f := range layout {
		if f.Role == testengine.RoleAgent || controllersAPT {
			continue // workers (and APT controllers) get these from a .deb
		}
		fmt.Fprintf(&osFiles, "        - source: %s\n          target: %s\n          perm: \"%04o\"\n", f.local, f.Target, f.Mode)
		if f.Mode&0o111 != 0 {
			osFiles.WriteString("          executable: true\n")
		}
		osFiles.WriteString("          selector:\n            package: binary\n")
		if f.Role == testengine.RoleServer {
			osFiles.WriteString("            profile: controller\n")
		}
	}
	// Relative to the definition, as every source is: an absolute path
	// would put this run's temporary directory in the manifest.
	fmt.Fprintf(&osFiles, "        - source: %s\n          target: /var/lib/cargoship/debs/%s\n          selector:\n            package: apt\n            profile: worker\n            os: debian\n", filepath.Base(deb), filepath.Base(deb))
	for _, src := range o.ControllerDebs {
		// A Debian epoch's colon comes down from the archive as %3a; the
		// file name means nothing to dpkg, so keep it plain.
		name := filepath.Base(src)
		if _, after, ok := strings.Cut(name, "%3a"); ok {
			before, _, _ := strings.Cut(name, "_")
			name = before + "_" + after
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "files", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&osFiles, "        - source: files/%s\n          target: /var/lib/cargoship/debs/%s\n          selector:\n            package: apt\n            profile: controller\n            os: debian\n", name, name)
	}
	binary := ""
	for _, f := range layout {
		if f.Source == testengine.SourceBinary {
			binary = f.Target
		}
	}
	def := fmt.Sprintf(`kind: ZarfDistro
metadata:
  name: e2e
  version: %[1]s
  architectures: [amd64]
spec:
  type: %[5]s
  version: %[1]s
  config:
    engine:
      config:
        write-kubeconfig-mode: "0600"
    os:
      sysctl:
        net.ipv4.ip_forward: "1"
        net.ipv4.conf.all.forwarding: "1"
        vm.max_map_count: "262144"
      fapolicyd: |
        %[8]s
      selinux:
        modules:
          - name: %[9]s
            source: files/%[9]s.cil
        booleans:
          %[10]s: true
        fileContexts:
          - path: %[11]s
            type: %[12]s
          - path: %[13]s
            type: %[14]s
      files:
%[2]s    files:
      - source: files/motd
        target: /etc/cargoship-e2e/motd
        perm: "0640"
%[4]s    manifests:
      - source: files/%[7]s
        target: /etc/cargoship/manifests/%[7]s
    imageConfig:
      compression: zstd
      images:
        - %[3]s
%[6]s`, version, osFiles.String(), ImageRef, files.String(), d.Name, o.Config, CNIManifest,
		FapolicydRule, SELinuxModule, SELinuxBoolean, MOTDContext, MOTDType, binary, EngineExecType)
	if err := os.WriteFile(filepath.Join(dir, "distro.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	return &TestPackage{
		Path: createPackage(t, dir, transport), Version: version, Distro: d, Image: ImageRef,
		MOTD: "/etc/cargoship-e2e/motd", Binary: binary,
		Deb: "/var/lib/cargoship/debs/" + filepath.Base(deb),
	}
}

// BuildTime is the build timestamp of every package the suites create:
// fixed, with the test image and the .deb, so nothing differs between the
// test packages of two runs (docs/e2e.md, "The test package is
// reproducible").
var BuildTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// CreatePackage runs cargoship's own create over a definition directory.
func CreatePackage(t testing.TB, dir string) string {
	t.Helper()
	return createPackage(t, dir, nil)
}

// createPackage is CreatePackage pulling images through transport (nil:
// the default one).
func createPackage(t testing.TB, dir string, transport http.RoundTripper) string {
	t.Helper()
	res, err := pkgfile.Create(context.Background(), pkgfile.CreateOptions{
		Definition: dir, OutputDir: filepath.Join(dir, "out"), InsecureRegistry: true, TmpDir: dir,
		BuildTime: BuildTime, RegistryTransport: transport,
	})
	if err != nil {
		t.Fatalf("creating a test package from %s: %v", dir, err)
	}
	return res.Path
}
