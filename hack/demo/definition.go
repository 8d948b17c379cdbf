package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/colonel-byte/cargoship/internal/repo"
	testengine "github.com/colonel-byte/cargoship/test/engine"
)

// The engine the demo installs: the test engine stamped as this k3s release.
const (
	engineBuilt   = "v1.35.3+k3s1" // what `k3s --version` reports
	engineVersion = "1.35.3-k3s1"  // how a definition spells it
	distroName    = "demo"
)

// goTool finds the go command: root's PATH under sudo often lacks it, but
// the toolchain that runs `go run` knows where it lives.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if r := os.Getenv("GOROOT"); r != "" {
		return filepath.Join(r, "bin", "go")
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // fallback only
}

// build compiles cargoship and the test engine (as k3s) into build/demo.
func (d *demo) build(ctx context.Context) error {
	if err := os.RemoveAll(d.defDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(d.defDir(), "bin"), 0o755); err != nil {
		return err
	}
	goBin := goTool()
	if _, err := command(ctx, false, nil, goBin, "build", "-o", d.cargoship(), "./cmd/cargoship"); err != nil {
		return err
	}
	// testengine.Build stamps the version and commit the way the e2e suite
	// does; the command shown is what it runs.
	fmt.Printf("$ CGO_ENABLED=0 go build -ldflags '-X .../buildinfo.Version=%s ...' -o %s ./test/engine/cmd/testengine\n",
		engineBuilt, repo.Rel(filepath.Join(d.defDir(), "bin", "k3s")))
	if _, err := testengine.Build(ctx, filepath.Join(d.defDir(), "bin"), testengine.Binary{Engine: "k3s", Version: engineBuilt}); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(d.defDir(), "bin", "k3s"), "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("the test engine does not run: %w\n%s", err, out)
	}
	indent(string(out))
	return nil
}

// findKubectl is the kubectl the package carries to the controllers: the
// test engine runs no API client of its own and, like `k3s kubectl`, execs
// the real kubectl on PATH. cargoship waits for nodes through it.
func findKubectl() (string, error) {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("the demo needs a kubectl binary on PATH to put on the controllers (the test engine runs the real kubectl for `k3s kubectl`); install one and run again")
	}
	return filepath.EvalSymlinks(p)
}

// writeDefinition writes build/demo/definition: distro.yaml plus the unit
// files and scripts of the test engine's k3s layout (the shapes k3s's
// install script writes). image is the one image the package carries, or
// "" for none.
func (d *demo) writeDefinition(image string) error {
	kubectl, err := findKubectl()
	if err != nil {
		return err
	}
	layout, err := testengine.Layout("k3s")
	if err != nil {
		return err
	}
	var files strings.Builder
	for _, f := range layout {
		var src string
		profile := ""
		switch f.Role {
		case testengine.RoleServer:
			profile = "controller"
		case testengine.RoleAgent:
			profile = "worker"
		}
		switch f.Source {
		case testengine.SourceBinary:
			src = "bin/k3s"
		case testengine.SourceKubectl:
			// Only the controllers run kubectl; sparing the workers a
			// 50 MB upload keeps the demo quick.
			src, profile = kubectl, "controller"
		default:
			body, err := testengine.Unit(f.Source)
			if err != nil {
				return err
			}
			src = filepath.Join("units", filepath.Base(f.Source))
			if err := writeFile(filepath.Join(d.defDir(), src), body); err != nil {
				return err
			}
		}
		fmt.Fprintf(&files, "        - source: %s\n          target: %s\n", src, f.Target)
		if f.Mode&0o111 != 0 {
			files.WriteString("          executable: true\n")
		}
		files.WriteString("          selector:\n            package: binary\n")
		if profile != "" {
			fmt.Fprintf(&files, "            profile: %s\n", profile)
		}
	}
	images := "      images: []\n"
	if image != "" {
		images = fmt.Sprintf("      compression: zstd\n      images:\n        - %s\n", image)
	}
	def := fmt.Sprintf(`# Written by hack/demo: cargoship's demo package, built with no network.
# The "k3s" here is the cargoship TEST ENGINE, a test double that behaves like
# k3s as cargoship sees it (units, config.yaml, token, joining, a small kube
# API) and runs no containers. kubectl is this machine's own.
kind: ZarfDistro
metadata:
  name: %[1]s
  description: cargoship demo, the test engine as k3s
  version: %[2]s
  architectures: [%[3]s]
spec:
  type: k3s
  version: %[2]s
  config:
    engine:
      config:
        write-kubeconfig-mode: "0600"
    os:
      # Per-network-namespace sysctls: the demo's hosts are containers, which
      # may not set machine-wide ones such as vm.max_map_count.
      sysctl:
        net.ipv4.ip_forward: "1"
        net.ipv4.conf.all.forwarding: "1"
      # The binary route: every host gets the engine as k3s's install script
      # lays it out; the units are chosen by role class.
      files:
%[4]s    files:
      - target: /etc/motd.d/cargoship-demo
        perm: "0644"
        data: |
          This host was prepared by cargoship's demo package.
    imageConfig:
%[5]s`, distroName, engineVersion, runtime.GOARCH, files.String(), images)
	return writeFile(filepath.Join(d.defDir(), "distro.yaml"), []byte(def))
}

func writeFile(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
