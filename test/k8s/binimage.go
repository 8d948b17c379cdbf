package k8s

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BinaryImage is a linux/amd64 image of one static binary at path (root,
// 0755), its entrypoint, every timestamp created: the same binary gives
// the same digest. The suites' own workloads (the pod network, the probe)
// need nothing else: no shell, no libc.
func BinaryImage(binaryPath, path, createdBy string, created time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(binaryPath)
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", binaryPath, err)
	}
	layer, err := binaryLayer(bin, path, created)
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", binaryPath, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: createdBy},
	})
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", binaryPath, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", binaryPath, err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{path}
	cf.Config.WorkingDir = "/"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("image of %s: %w", binaryPath, err)
	}
	return img, nil
}

// binaryLayer is a layer of one file, the binary at path.
func binaryLayer(bin []byte, path string, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	h := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(path, "/"),
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  mtime,
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
