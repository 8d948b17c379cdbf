package podnet

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// BinaryPath is where the image holds the daemon, its entrypoint.
	BinaryPath = "/podnet"
	// ImageName is the repository Ref tags the image in.
	ImageName = "cargoship.test/podnet"
)

// imageTime is every timestamp in the image (the Unix epoch), so the same
// binary gives the same digest.
var imageTime = time.Unix(0, 0).UTC()

// Image is podnet's image for linux/amd64: one layer with the static
// binary at BinaryPath (root-owned, 0755), which is the entrypoint. It
// needs nothing else: no shell, no libc, no CA bundle (the cluster's CA
// comes with the ServiceAccount).
func Image(binaryPath string) (v1.Image, error) {
	bin, err := os.ReadFile(binaryPath)
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	layer, err := binaryLayer(bin)
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: imageTime}, CreatedBy: "cargoship test/k8s/podnet"},
	})
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: imageTime}
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.WorkingDir = "/"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	return img, nil
}

// binaryLayer is a gzip layer of one file, the binary at BinaryPath.
func binaryLayer(bin []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	h := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(BinaryPath, "/"),
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  imageTime,
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(h); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// Ref is the reference to tag img with: ImageName, tagged with the start
// of its digest, so a changed binary is a new tag and the DaemonSet rolls.
func Ref(img v1.Image) (string, error) {
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("podnet image: %w", err)
	}
	return ImageName + ":" + d.Hex[:12], nil
}

// WriteTarball writes img tagged ref as a docker-archive tarball at path,
// what `ctr images import` reads.
func WriteTarball(img v1.Image, ref, path string) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("podnet image %s: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("podnet image %s: write %s: %w", ref, path, err)
	}
	return nil
}
