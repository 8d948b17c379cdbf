package cluster

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Versions of the test engine the walks install and upgrade to.
const (
	engineVersion      = "1.35.3-k3s1"
	engineVersionBuilt = "v1.35.3+k3s1"
	upgradeVersion     = "1.35.4-k3s1"
	upgradeBuilt       = "v1.35.4+k3s1"
	buildInfoPkg       = "github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
)

// testPackage is a package built for the suite: the test engine in place of
// k3s (a test double: no k3s binary can be downloaded here), its units, a
// real .deb for the workers' APT route, a common file, and an image pulled
// from an in-process registry.
type testPackage struct {
	Path    string
	Version string
	// Image is the image reference the package carries.
	Image string
	// Files are the definition's targets by what they are, for assertions.
	MOTD, Binary, ServerUnit, AgentUnit, Deb string
}

// repoRoot finds the module root from this package's directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// buildTestEngine builds the test engine stamped with version as a k3s.
func buildTestEngine(t testing.TB, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "k3s")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags",
		fmt.Sprintf("-s -w -X %s.Version=%s -X %s.GitCommit=e2e0e2e0", buildInfoPkg, version, buildInfoPkg),
		"-o", out, "./test/engine/cmd/testengine")
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test engine: %v\n%s", err, b)
	}
	return out
}

// startRegistry serves go-containerregistry's registry on this machine's
// loopback with one random image pushed, and returns its reference.
func startRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/e2e/pause:1.0"
	img, err := random.Image(32<<10, 2)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	return ref
}

// buildDeb makes a real Debian package with dpkg-deb: it carries the test
// engine and the agent unit, so a worker's APT route installs the engine.
func buildDeb(t testing.TB, dir, engineBin, agentUnit string) string {
	t.Helper()
	root := filepath.Join(dir, "debroot")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "lib/systemd/system"), 0o755))
	control := "Package: cargoship-e2e-agent\nVersion: 1.35.3-1\nArchitecture: amd64\nMaintainer: cargoship <e2e@cargoship.invalid>\nDescription: test double of a k3s agent for cargoship's e2e suite\n"
	must(os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644))
	bin, err := os.ReadFile(engineBin)
	must(err)
	must(os.WriteFile(filepath.Join(root, "usr/local/bin/k3s"), bin, 0o755))
	must(os.WriteFile(filepath.Join(root, "lib/systemd/system/k3s-agent.service"), []byte(agentUnit), 0o644))
	out := filepath.Join(dir, "cargoship-e2e-agent_1.35.3-1_amd64.deb")
	if b, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, out).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, b)
	}
	return out
}

// unit is a systemd unit starting the engine the way k3s's install script
// writes it.
func unit(desc, args string) string {
	return fmt.Sprintf(`[Unit]
Description=%s
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
ExecStart=/usr/local/bin/k3s %s
KillMode=process
Delegate=yes
Restart=always
RestartSec=5s

[Install]
WantedBy=multi-user.target
`, desc, args)
}

// buildTestPackage writes the suite's definition and creates the package
// with cargoship's own create.
func buildTestPackage(t testing.TB, version, builtVersion string) *testPackage {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"bin", "units", "files"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildTestEngine(t, filepath.Join(dir, "bin"), builtVersion)
	server, agent := unit("Lightweight Kubernetes (cargoship test double)", "server"), unit("Lightweight Kubernetes agent (cargoship test double)", "agent")
	write := func(rel, body string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("units/k3s.service", server)
	write("files/motd", "managed by cargoship's e2e suite\n")
	deb := buildDeb(t, dir, bin, agent)
	img := startRegistry(t)
	def := fmt.Sprintf(`kind: ZarfDistro
metadata:
  name: e2e
  version: %[1]s
  architectures: [amd64]
spec:
  type: k3s
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
      files:
        - source: bin/k3s
          target: /usr/local/bin/k3s
          executable: true
          selector:
            package: binary
        - source: units/k3s.service
          target: /etc/systemd/system/k3s.service
          selector:
            package: binary
            profile: controller
        - source: %[2]s
          target: /var/lib/cargoship/debs/%[3]s
          selector:
            package: apt
            profile: worker
            os: debian
    files:
      - source: files/motd
        target: /etc/cargoship-e2e/motd
        perm: "0640"
    imageConfig:
      compression: zstd
      images:
        - %[4]s
`, version, deb, filepath.Base(deb), img)
	write("distro.yaml", def)
	return &testPackage{
		Path: createPackage(t, dir), Version: version, Image: img,
		MOTD: "/etc/cargoship-e2e/motd", Binary: "/usr/local/bin/k3s",
		ServerUnit: "/etc/systemd/system/k3s.service", AgentUnit: "/lib/systemd/system/k3s-agent.service",
		Deb: "/var/lib/cargoship/debs/" + filepath.Base(deb),
	}
}

// createPackage runs cargoship's own create over a definition directory.
func createPackage(t testing.TB, dir string) string {
	t.Helper()
	res, err := pkgfile.Create(context.Background(), pkgfile.CreateOptions{
		Definition: dir, OutputDir: filepath.Join(dir, "out"), InsecureRegistry: true, TmpDir: dir,
	})
	if err != nil {
		t.Fatalf("creating a test package from %s: %v", dir, err)
	}
	return res.Path
}
