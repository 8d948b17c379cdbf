package image

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// IndexFileName is the archive entry that records each image's registry
// manifest digest and platform.
const IndexFileName = "cargoship-images.json"

// indexEntry is one image in IndexFileName.
type indexEntry struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	Platform string `json:"platform"`
}

// ArchiveName returns the file name of an architecture's image archive:
// images-amd64.tar, images-amd64.tar.gz or images-amd64.tar.zst. The engines
// pick the decompressor from the extension.
func ArchiveName(arch, compression string) string {
	ext, err := compressionExt(compression)
	if err != nil {
		ext = ""
	}
	return "images-" + arch + ".tar" + ext
}

func compressionExt(compression string) (string, error) {
	switch compression {
	case "", "none":
		return "", nil
	case "gz":
		return ".gz", nil
	case "zstd":
		return ".zst", nil
	}
	return "", fmt.Errorf("image archive: compression %q is not one of none, gz, zstd", compression)
}

// compress wraps w per compression; Close finishes the stream, not w.
func compress(w io.Writer, compression string) (io.WriteCloser, error) {
	switch compression {
	case "", "none":
		return nopCloser{w}, nil
	case "gz":
		return gzip.NewWriter(w), nil
	case "zstd":
		return zstd.NewWriter(w)
	}
	_, err := compressionExt(compression)
	return nil, err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// epoch is every entry's modification time, so equal inputs give equal bytes.
var epoch = time.Unix(0, 0).UTC()

// writeArchive writes the docker-archive tarball: per image (in the given
// order) its config and the layers not written yet, then manifest.json and
// the digest index.
func writeArchive(w io.Writer, compression string, cache *fetch.Cache, arch string, images []*resolvedImage) error {
	cw, err := compress(w, compression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(cw)
	written := map[string]bool{}
	var manifest tarball.Manifest
	var index []indexEntry

	// Images that are one manifest under several names become one entry
	// with several RepoTags.
	byDigest := map[v1.Hash]int{}
	for _, img := range images {
		index = append(index, indexEntry{Ref: img.ref.normalized, Digest: img.digest.String(), Platform: "linux/" + arch})
		if i, ok := byDigest[img.digest]; ok {
			manifest[i].RepoTags = append(manifest[i].RepoTags, img.ref.normalized)
			continue
		}
		byDigest[img.digest] = len(manifest)
		desc := tarball.Descriptor{
			Config:   img.manifest.Config.Digest.Hex + ".json",
			RepoTags: []string{img.ref.normalized},
		}
		if err := writeBlobOnce(tw, cache, written, desc.Config, img.manifest.Config); err != nil {
			return fmt.Errorf("image %s: %w", img.ref.normalized, err)
		}
		for _, l := range img.manifest.Layers {
			name := l.Digest.Hex + layerExt(l.MediaType)
			desc.Layers = append(desc.Layers, name)
			if err := writeBlobOnce(tw, cache, written, name, l); err != nil {
				return fmt.Errorf("image %s: %w", img.ref.normalized, err)
			}
		}
		manifest = append(manifest, desc)
	}
	if err := writeJSON(tw, "manifest.json", manifest); err != nil {
		return err
	}
	if err := writeJSON(tw, IndexFileName, index); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	if err := cw.Close(); err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	return nil
}

// layerExt names a layer file after its compression, as docker save and
// go-containerregistry do, so tools that go by extension read it right.
func layerExt(mt types.MediaType) string {
	switch mt {
	case types.OCILayerZStd:
		return ".tar.zst"
	case types.OCIUncompressedLayer, types.OCIUncompressedRestrictedLayer, types.DockerUncompressedLayer:
		return ".tar"
	}
	return ".tar.gz"
}

func header(name string, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     size,
		Mode:     0o644,
		ModTime:  epoch,
	}
}

// writeBlobOnce streams a cached blob into the archive, checking its digest
// on the way; a blob already written is skipped.
func writeBlobOnce(tw *tar.Writer, cache *fetch.Cache, written map[string]bool, name string, d v1.Descriptor) error {
	if written[name] {
		return nil
	}
	written[name] = true
	path := cache.BlobPath(d.Digest.Hex)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	defer f.Close()
	if err := tw.WriteHeader(header(name, d.Size)); err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, d.Size))
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != d.Size || got != d.Digest.Hex {
		// The cache was damaged after the blob was stored: drop the entry
		// so the next run pulls it again.
		_ = cache.Remove(d.Digest.Hex)
		return fmt.Errorf("cached blob %s is damaged (%d bytes, sha256 %s); it was removed, run again to pull it", path, n, got)
	}
	return nil
}

func writeJSON(tw *tar.Writer, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("image archive: %s: %w", name, err)
	}
	if err := tw.WriteHeader(header(name, int64(len(b)))); err != nil {
		return fmt.Errorf("image archive: %s: %w", name, err)
	}
	if _, err := tw.Write(b); err != nil {
		return fmt.Errorf("image archive: %s: %w", name, err)
	}
	return nil
}
