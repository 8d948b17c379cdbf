package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// maxMetadata bounds manifest.json and the index, the only entries read
// into memory.
const maxMetadata = 16 << 20

// ReadArchive reads an archive written by WriteArchive (plain, gzip or
// zstd, detected from its first bytes) in one pass. Every config and layer
// is hashed and must match the digest its name carries. It returns one
// summary per name in manifest.json, sorted by Ref; Digest is filled from
// the archive's digest index when present.
func ReadArchive(r io.Reader) ([]ImageSummary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("image archive: %w", err)
	}
	var src io.Reader = br
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("image archive: gzip: %w", err)
		}
		defer func() { _ = zr.Close() }()
		src = zr
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("image archive: zstd: %w", err)
		}
		defer zr.Close()
		src = zr
	}

	type blob struct {
		sha  string
		size int64
	}
	blobs := map[string]blob{}
	var manifest tarball.Manifest
	var index []indexEntry
	haveManifest := false
	tr := tar.NewReader(src)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("image archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(hdr.Name)
		switch name {
		case "manifest.json":
			if err := readJSON(tr, name, &manifest); err != nil {
				return nil, err
			}
			haveManifest = true
		case IndexFileName:
			if err := readJSON(tr, name, &index); err != nil {
				return nil, err
			}
		default:
			h := sha256.New()
			n, err := io.Copy(h, tr)
			if err != nil {
				return nil, fmt.Errorf("image archive: %s: %w", name, err)
			}
			blobs[name] = blob{sha: hex.EncodeToString(h.Sum(nil)), size: n}
		}
	}
	if !haveManifest {
		return nil, errors.New("image archive: no manifest.json (not a docker-archive image tarball)")
	}

	digests := map[string]string{}
	for _, e := range index {
		digests[e.Ref] = e.Digest
	}
	// lookup returns an entry's digest, refusing a missing entry or one
	// whose content is not what its name says.
	lookup := func(name string) (blob, error) {
		b, ok := blobs[path.Clean(name)]
		if !ok {
			return blob{}, fmt.Errorf("image archive: manifest.json names %s, which the archive does not hold", name)
		}
		if named, _, _ := strings.Cut(path.Base(name), "."); named != b.sha {
			return blob{}, fmt.Errorf("image archive: %s holds content with sha256 %s", name, b.sha)
		}
		return b, nil
	}
	var out []ImageSummary
	for _, d := range manifest {
		cfg, err := lookup(d.Config)
		if err != nil {
			return nil, err
		}
		s := ImageSummary{ConfigDigest: "sha256:" + cfg.sha, Size: cfg.size}
		for _, l := range d.Layers {
			lb, err := lookup(l)
			if err != nil {
				return nil, err
			}
			s.Layers = append(s.Layers, "sha256:"+lb.sha)
			s.Size += lb.size
		}
		for _, tag := range d.RepoTags {
			one := s
			one.Ref, one.Digest = tag, digests[tag]
			one.Layers = slices.Clone(s.Layers)
			out = append(out, one)
		}
	}
	slices.SortFunc(out, func(a, b ImageSummary) int { return strings.Compare(a.Ref, b.Ref) })
	return out, nil
}

func readJSON(r io.Reader, name string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, maxMetadata+1))
	if err != nil {
		return fmt.Errorf("image archive: %s: %w", name, err)
	}
	if len(b) > maxMetadata {
		return fmt.Errorf("image archive: %s is larger than %d bytes", name, maxMetadata)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("image archive: %s: %w", name, err)
	}
	return nil
}
