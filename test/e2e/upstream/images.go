package upstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/k8s"
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
	img, err := k8s.BinaryImage(probe, "/probe", "cargoship test/e2e/upstream probe", e2eutil.BuildTime)
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
