// Command gen writes the local sources of the local-k3s example definition
// into example/local-k3s/layout: cargoship's test engine built as k3s
// v1.35.3+k3s1, this machine's kubectl (which the test engine runs), and
// the engine's units and scripts, each named after its install target.
// Then it copies distro.yaml.in to distro.yaml: the definition exists only
// once the files it names do. Nothing is downloaded, so `cargoship create
// example/local-k3s` needs no network (docs/e2e.md, "Your own package").
//
//	go run ./example/local-k3s/gen
//
// With -version and -out it writes the same definition at another release
// into another directory, the package an upgrade walk moves to
// (CARGOSHIP_E2E_UPGRADE_PACKAGE):
//
//	go run ./example/local-k3s/gen -version 1.35.4-k3s1 -out build/local-k3s-1.35.4
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	testengine "github.com/colonel-byte/cargoship/test/engine"
)

func main() {
	def := filepath.Join("example", "local-k3s")
	version := flag.String("version", defVersion, "the definition's release")
	out := flag.String("out", def, "where the definition and its sources go")
	flag.Parse()
	if err := run(def, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// defVersion is distro.yaml.in's release.
const defVersion = "1.35.3-k3s1"

// run writes out/layout and out/distro.yaml (and, when out is not the
// example, its common files) at version.
func run(def, out, version string) error {
	dir := filepath.Join(out, "layout")
	if err := os.MkdirAll(filepath.Join(out, "files"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The test engine reports the release as k3s does: v1.35.3+k3s1.
	built := "v" + strings.Replace(version, "-", "+", 1)
	bin, err := testengine.Build(context.Background(), dir, testengine.Binary{Engine: "k3s", Version: built})
	if err != nil {
		return err
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return fmt.Errorf("the test engine runs this machine's kubectl, and there is none: %w", err)
	}
	files, err := testengine.Layout("k3s")
	if err != nil {
		return err
	}
	for _, f := range files {
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
			return fmt.Errorf("%s: %w", f.Target, err)
		}
		dst := filepath.Join(dir, filepath.Base(f.Target))
		if err := os.WriteFile(dst, body, f.Mode); err != nil {
			return err
		}
		fmt.Printf("%s -> %s (%s, %04o)\n", dst, f.Target, f.Role, f.Mode)
	}
	motd, err := os.ReadFile(filepath.Join(def, "files", "motd"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "files", "motd"), motd, 0o644); err != nil {
		return err
	}
	in, err := os.ReadFile(filepath.Join(def, "distro.yaml.in"))
	if err != nil {
		return err
	}
	text := strings.ReplaceAll(string(in), defVersion, version)
	text = strings.ReplaceAll(text, "v"+strings.Replace(defVersion, "-", "+", 1), built)
	return os.WriteFile(filepath.Join(out, "distro.yaml"), []byte(text), 0o644)
}
