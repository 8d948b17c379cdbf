// Command k8s-build builds a pinned Kubernetes release from source (or
// finds it in the cache) and prints where its binaries and images are:
//
//	go run ./test/k8s/cmd/k8s-build -version 1.35.4 [-json]
//	go run ./test/k8s/cmd/k8s-build -version all
//
// "all" builds every pinned release, one after the other: hack/test.sh
// starts it first so the builds overlap the tiers that mostly wait.
// See docs/reference/kubernetes-build.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/k8s"
)

func main() {
	version := flag.String("version", k8s.V1_35_4.Kubernetes, "the Kubernetes release to build (pinned: "+strings.Join(pinned(), ", ")+"), or all of them")
	asJSON := flag.Bool("json", false, "print the build's record (k8s.Artifacts) as JSON instead")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	versions := []string{*version}
	if *version == "all" {
		versions = pinned()
	}
	for _, v := range versions {
		if err := run(ctx, v, *asJSON); err != nil {
			fmt.Fprintln(os.Stderr, "k8s-build:", err)
			os.Exit(1)
		}
	}
}

func pinned() []string {
	var vs []string
	for _, r := range []k8s.Release{k8s.V1_34_4, k8s.V1_35_4} {
		vs = append(vs, r.Kubernetes)
	}
	return vs
}

func run(ctx context.Context, version string, asJSON bool) error {
	r, err := k8s.Lookup(version)
	if err != nil {
		return err
	}
	a, err := k8s.Build(ctx, r)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(a); err != nil {
			return fmt.Errorf("print the build record: %w", err)
		}
		return nil
	}
	fmt.Printf("dir      %s\n", a.Dir)
	fmt.Printf("bin      %s\n", a.BinDir)
	for _, b := range k8s.Binaries() {
		fmt.Printf("  %-24s %s\n", b, a.Path(b))
	}
	fmt.Printf("cni      %s\n", a.CNIDir)
	entries, err := os.ReadDir(a.CNIDir)
	if err != nil {
		return fmt.Errorf("read %s: %w", a.CNIDir, err)
	}
	for _, e := range entries {
		fmt.Printf("  %-24s %s\n", e.Name(), filepath.Join(a.CNIDir, e.Name()))
	}
	fmt.Println("images")
	for _, img := range a.Images {
		fmt.Printf("  %-48s %s\n    %s\n", img.Ref, img.Digest, img.Tarball)
	}
	fmt.Println("versions")
	for _, v := range a.Versions {
		fmt.Printf("  %s\n", v)
	}
	fmt.Println("kubeadm ClusterConfiguration")
	fmt.Print(indent(r.KubeadmClusterConfiguration()))
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
