package image

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/version"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DefaultConcurrency bounds pulls when Puller.Concurrency is not set.
const DefaultConcurrency = 4

// Puller pulls images for one platform into an archive, through a blob cache.
type Puller struct {
	// CacheDir holds image blobs by digest (a fetch.Cache), so a second
	// create pulls no blob twice. Required.
	CacheDir string
	// Concurrency bounds manifest and blob transfers; 0 is DefaultConcurrency.
	Concurrency int
	// Insecure allows plain-HTTP registries (local mirrors, tests).
	Insecure bool
	// Log receives a line per image; nil discards.
	Log *slog.Logger
	// Transport carries registry requests; nil is go-containerregistry's
	// default transport.
	Transport http.RoundTripper
	// Keychain supplies registry credentials; nil reads the docker and
	// podman credential files (authn.DefaultKeychain).
	Keychain authn.Keychain
	// Progress shows blob transfers; nil shows nothing.
	Progress fetch.Progress
	// Overrides pull images through mirrors (ParseRegistryOverrides); the
	// archive still names every image by its original reference.
	Overrides []RegistryOverride
}

// ArchiveSummary is what WriteArchive wrote.
type ArchiveSummary struct {
	Arch   string
	Images []ImageSummary
	// Size is the number of bytes written (after compression).
	Size int64
}

// ImageSummary describes one image in an archive.
type ImageSummary struct {
	// Ref is the normalised reference, as the archive names the image.
	Ref string
	// Digest is the platform image's registry manifest digest.
	Digest string
	// ConfigDigest and Layers are the digests of the config and the
	// (compressed) layer blobs, in order.
	ConfigDigest string
	Layers       []string
	// Size is the config plus the layers, in bytes.
	Size int64
}

// WriteArchive pulls refs for linux/arch (amd64 or arm64) and writes one
// archive holding all of them, each shared blob stored once, compressed per
// compression ("none", "gz" or "zstd") into w. Duplicate references (after
// normalisation) are pulled once. Any image that cannot be pulled fails the
// whole archive.
func (p *Puller) WriteArchive(ctx context.Context, w io.Writer, refs []string, arch string, compression string) (ArchiveSummary, error) {
	if arch != "amd64" && arch != "arm64" {
		return ArchiveSummary{}, fmt.Errorf("image archive: architecture %q is not amd64 or arm64", arch)
	}
	if _, err := compressionExt(compression); err != nil {
		return ArchiveSummary{}, err
	}
	if len(refs) == 0 {
		return ArchiveSummary{}, fmt.Errorf("image archive for %s: no images listed", arch)
	}
	if p.CacheDir == "" {
		return ArchiveSummary{}, fmt.Errorf("image archive: no cache directory set")
	}
	cache, err := fetch.NewCache(p.CacheDir)
	if err != nil {
		return ArchiveSummary{}, err
	}
	parsed, err := p.parseRefs(refs)
	if err != nil {
		return ArchiveSummary{}, err
	}
	rp, err := remote.NewPuller(p.remoteOptions()...)
	if err != nil {
		return ArchiveSummary{}, fmt.Errorf("image archive: %w", err)
	}

	resolved := make([]*resolvedImage, len(parsed))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.concurrency())
	for i, r := range parsed {
		g.Go(func() error {
			img, err := p.resolve(gctx, rp, cache, r, arch)
			resolved[i] = img
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return ArchiveSummary{}, err
	}
	if err := p.prefetchLayers(ctx, rp, cache, resolved); err != nil {
		return ArchiveSummary{}, err
	}

	cw := &countingWriter{w: w}
	if err := writeArchive(cw, compression, cache, arch, resolved); err != nil {
		return ArchiveSummary{}, err
	}
	sum := ArchiveSummary{Arch: arch, Size: cw.n}
	for _, img := range resolved {
		sum.Images = append(sum.Images, img.summary())
		p.logger().Info("image archived", "image", img.ref.normalized, "arch", arch, "digest", img.digest.String())
	}
	return sum, nil
}

// parseRefs normalises and de-duplicates, in a stable (sorted) order.
func (p *Puller) parseRefs(refs []string) ([]reference, error) {
	seen := map[string]bool{}
	var out []reference
	for _, s := range refs {
		r, err := parseRef(s, p.Insecure)
		if err != nil {
			return nil, err
		}
		if seen[r.normalized] {
			continue
		}
		if r, err = r.withOverride(p.Overrides, p.Insecure); err != nil {
			return nil, err
		}
		seen[r.normalized] = true
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b reference) int {
		switch {
		case a.normalized < b.normalized:
			return -1
		case a.normalized > b.normalized:
			return 1
		}
		return 0
	})
	return out, nil
}

// prefetchLayers brings every distinct layer into the cache, concurrently,
// so the archive is then written from local files in one sequential pass.
func (p *Puller) prefetchLayers(ctx context.Context, rp *remote.Puller, cache *fetch.Cache, images []*resolvedImage) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.concurrency())
	seen := map[string]bool{}
	for _, img := range images {
		for _, l := range img.manifest.Layers {
			if seen[l.Digest.Hex] {
				continue
			}
			seen[l.Digest.Hex] = true
			g.Go(func() error {
				_, err := p.ensureBlob(gctx, rp, cache, img.ref, l)
				return err
			})
		}
	}
	return g.Wait()
}

func (p *Puller) remoteOptions() []remote.Option {
	kc := p.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{
		remote.WithAuthFromKeychain(kc),
		remote.WithUserAgent("cargoship/" + version.String()),
		remote.WithJobs(p.concurrency()),
	}
	if p.Transport != nil {
		opts = append(opts, remote.WithTransport(p.Transport))
	}
	return opts
}

func (p *Puller) concurrency() int {
	if p.Concurrency > 0 {
		return p.Concurrency
	}
	return DefaultConcurrency
}

func (p *Puller) logger() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (img *resolvedImage) summary() ImageSummary {
	s := ImageSummary{
		Ref:          img.ref.normalized,
		Digest:       img.digest.String(),
		ConfigDigest: img.manifest.Config.Digest.String(),
		Size:         img.manifest.Config.Size,
	}
	for _, l := range img.manifest.Layers {
		s.Layers = append(s.Layers, l.Digest.String())
		s.Size += l.Size
	}
	return s
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
