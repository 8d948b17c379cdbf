// Command gen writes the local sources of the local-k3s example definition
// into example/local-k3s/layout: cargoship's test engine built as k3s
// v1.35.3+k3s1, this machine's kubectl (which the test engine runs), and
// the engine's units and scripts, each named after its install target.
// Then it copies distro.yaml.in to distro.yaml: the definition exists only
// once the files it names do. Nothing is downloaded, so `cargoship create
// example/local-k3s` needs no network (docs/e2e.md, "Your own package").
//
//	go run ./example/local-k3s/gen
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	testengine "github.com/colonel-byte/cargoship/test/engine"
)

func main() {
	def := flag.String("def", filepath.Join("example", "local-k3s"), "the example's directory")
	flag.Parse()
	if err := run(*def); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// version is the release the test engine reports, the definition's
// 1.35.3-k3s1.
const version = "v1.35.3+k3s1"

func run(def string) error {
	dir := filepath.Join(def, "layout")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, err := testengine.Build(context.Background(), dir, testengine.Binary{Engine: "k3s", Version: version})
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
		out := filepath.Join(dir, filepath.Base(f.Target))
		if err := os.WriteFile(out, body, f.Mode); err != nil {
			return err
		}
		fmt.Printf("%s -> %s (%s, %04o)\n", out, f.Target, f.Role, f.Mode)
	}
	in, err := os.ReadFile(filepath.Join(def, "distro.yaml.in"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(def, "distro.yaml"), in, 0o644)
}
