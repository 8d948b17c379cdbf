package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// resolvedImage is one reference resolved to the image manifest for the
// wanted platform, with its config already in the cache.
type resolvedImage struct {
	ref      reference
	digest   v1.Hash // the platform image's manifest digest
	manifest *v1.Manifest
}

// resolve fetches the manifest for ref, picks the linux/arch image out of an
// index, and checks the image's config names that platform.
func (p *Puller) resolve(ctx context.Context, rp *remote.Puller, cache *fetch.Cache, r reference, arch string) (*resolvedImage, error) {
	desc, err := rp.Get(ctx, r.pull)
	if err != nil {
		return nil, pullError(r, arch, err)
	}
	raw, digest, mt := desc.Manifest, desc.Digest, desc.MediaType
	if mt.IsIndex() {
		idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("image %s: reading its index: %w", r.normalized, err)
		}
		child, err := pickPlatform(idx, arch)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", r.normalized, err)
		}
		cdesc, err := rp.Get(ctx, r.pull.Context().Digest(child.Digest.String()))
		if err != nil {
			return nil, pullError(r, arch, err)
		}
		raw, digest, mt = cdesc.Manifest, cdesc.Digest, cdesc.MediaType
	}
	if !mt.IsImage() {
		return nil, fmt.Errorf("image %s: manifest type %s is not supported (Docker schema 2 or OCI images only)", r.normalized, mt)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("image %s: reading its manifest: %w", r.normalized, err)
	}
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if d.Digest.Algorithm != "sha256" {
			return nil, fmt.Errorf("image %s: blob %s: only sha256 digests are supported", r.normalized, d.Digest)
		}
	}
	if _, err := p.ensureBlob(ctx, rp, cache, r, m.Config); err != nil {
		return nil, err
	}
	if err := checkConfigPlatform(cache, r, m.Config, arch); err != nil {
		return nil, err
	}
	return &resolvedImage{ref: r, digest: digest, manifest: m}, nil
}

// pickPlatform chooses the linux/arch image of an index, preferring the
// plain variant (arm64: v8) over others.
func pickPlatform(idx *v1.IndexManifest, arch string) (v1.Descriptor, error) {
	var matches []v1.Descriptor
	var offered []string
	for _, m := range idx.Manifests {
		if m.Platform == nil {
			continue
		}
		pl := m.Platform
		if pl.OS == "unknown" {
			continue // attestations and signatures
		}
		offered = append(offered, pl.String())
		if pl.OS == "linux" && pl.Architecture == arch && !m.MediaType.IsIndex() {
			matches = append(matches, m)
		}
	}
	for _, m := range matches {
		if v := m.Platform.Variant; v == "" || (arch == "arm64" && v == "v8") {
			return m, nil
		}
	}
	if len(matches) > 0 {
		return matches[0], nil
	}
	slices.Sort(offered)
	offered = slices.Compact(offered)
	return v1.Descriptor{}, fmt.Errorf("no linux/%s image in its index (it offers: %s)", arch, strings.Join(offered, ", "))
}

// checkConfigPlatform refuses a single-platform image built for another
// platform; a config that names no platform is accepted.
func checkConfigPlatform(cache *fetch.Cache, r reference, cfg v1.Descriptor, arch string) error {
	b, err := os.ReadFile(cache.BlobPath(cfg.Digest.Hex))
	if err != nil {
		return fmt.Errorf("image %s: config: %w", r.normalized, err)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("image %s: config %s: %w", r.normalized, cfg.Digest, err)
	}
	if (cf.OS != "" && cf.OS != "linux") || (cf.Architecture != "" && cf.Architecture != arch) {
		return fmt.Errorf("image %s is built for %s/%s only, not linux/%s", r.normalized, cf.OS, cf.Architecture, arch)
	}
	return nil
}

// pullError names the reference and platform, and says plainly when the
// registry does not have the image.
func pullError(r reference, arch string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		notFound := te.StatusCode == http.StatusNotFound
		for _, d := range te.Errors {
			if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
				notFound = true
			}
		}
		if notFound {
			return fmt.Errorf("image %s (linux/%s): not found in registry %s: %w", r.normalized, arch, r.pullRegistry(), err)
		}
	}
	if r.via != nil {
		return fmt.Errorf("image %s (linux/%s) from %s: %w", r.normalized, arch, r.pullRegistry(), err)
	}
	return fmt.Errorf("image %s (linux/%s): %w", r.normalized, arch, err)
}
