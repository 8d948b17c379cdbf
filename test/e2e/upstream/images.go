package upstream

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/k8s/podnet"
)

// probeImage is the walk's workload image (probe/).
const probeImage = e2eutil.ImageHost + "/e2e/probe:1.0"

// suiteImage is an image the suite builds for the package.
type suiteImage struct {
	ref string
	img v1.Image
}

// podnetManifestName is the pod network's manifest in the package.
const podnetManifestName = "podnet.yaml"

// suiteImages are the pod network's (test/k8s/podnet) and the probe's
// images, each one static binary built here, and the pod network's
// manifest, which names its image.
func suiteImages(ctx context.Context, t *testing.T, dir string) ([]suiteImage, []byte) {
	t.Helper()
	probe := goBuild(ctx, t, "./test/e2e/upstream/probe", filepath.Join(dir, "build", "probe"))
	img, err := binaryImage(probe, "/probe")
	if err != nil {
		t.Fatalf("the probe image: %v", err)
	}
	bin, err := podnet.BuildBinary(ctx, filepath.Join(dir, "build"))
	if err != nil {
		t.Fatal(err)
	}
	pn, err := podnet.Image(bin)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := podnet.Ref(pn)
	if err != nil {
		t.Fatal(err)
	}
	return []suiteImage{{ref: probeImage, img: img}, {ref: ref, img: pn}}, podnet.Manifest(ref)
}

// goBuild builds a static binary of one of this module's packages.
func goBuild(ctx context.Context, t *testing.T, pkg, out string) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// binaryImage is a linux/amd64 image of one static binary at path, its
// entrypoint, with fixed timestamps so two builds are one digest.
func binaryImage(bin, path string) (v1.Image, error) {
	body, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(body)), ModTime: e2eutil.BuildTime, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(body); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	img, err := imagetest.PlatformImage("amd64", static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Config.Entrypoint = []string{path}
	cf.Created = v1.Time{Time: e2eutil.BuildTime}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("image of %s: %w", bin, err)
	}
	return img, nil
}
