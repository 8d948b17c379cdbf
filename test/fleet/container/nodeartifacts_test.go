package container

import (
	"archive/tar"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// What the NodeRuntime tests install in a host, all made on this machine:
// Debian's containerd and runc, an image of testdata/nodeprobe, and a
// kubelet (kubelet_build_test.go).

const (
	probeRef = "docker.io/library/csprobe:1"
	// containerd 1.6's default sandbox_image: the probe stands in for it,
	// so the CRI never pulls.
	pauseRef = "registry.k8s.io/pause:3.6"
)

// nodeDebs returns Debian's containerd and runc packages, downloaded with
// apt-get into the fleet cache once.
func nodeDebs(t *testing.T, c *Container) []string {
	t.Helper()
	dir := filepath.Join(c.opts.CacheDir, "debs", "node")
	var debs []string
	for _, pkg := range []string{"containerd", "runc"} {
		found, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
		if len(found) == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("apt-get", "download", pkg)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("apt-get download %s (Debian's archive must be reachable, and apt-get update run: hack/deps.sh does): %v\n%s", pkg, err, out)
			}
			found, _ = filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
		}
		if len(found) == 0 {
			t.Fatalf("apt-get download %s left no %s_*.deb in %s", pkg, pkg, dir)
		}
		debs = append(debs, found[0])
	}
	return debs
}

// probeImage builds nodeprobe statically and writes a docker-archive of an
// image holding only it, tagged probeRef and pauseRef, for ctr to import.
func probeImage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "nodeprobe")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./testdata/nodeprobe/main.go")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build nodeprobe: %v\n%s", err, out)
	}
	layer, err := tarball.LayerFromFile(layerTar(t, bin, dir))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config = v1.Config{Entrypoint: []string{"/nodeprobe"}}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	refs := map[name.Reference]v1.Image{}
	for _, r := range []string{probeRef, pauseRef} {
		tag, err := name.NewTag(r)
		if err != nil {
			t.Fatal(err)
		}
		refs[tag] = img
	}
	out := filepath.Join(dir, "probe.tar")
	if err := tarball.MultiRefWriteToFile(out, refs); err != nil {
		t.Fatalf("write %s: %v", out, err)
	}
	return out
}

// layerTar writes a layer tarball holding bin as /nodeprobe.
func layerTar(t *testing.T, bin, dir string) string {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "layer.tar")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	hdr := &tar.Header{Name: "nodeprobe", Mode: 0o755, Size: int64(len(b)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
