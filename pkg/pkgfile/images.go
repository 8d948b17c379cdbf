package pkgfile

import (
	"context"
	"io"
	"log/slog"

	"github.com/colonel-byte/cargoship/pkg/image"
)

// imageArchiver writes one architecture's image archive. It is the one
// seam to pkg/image, so staging does not depend on how images are pulled.
type imageArchiver interface {
	ArchiveName(arch, compression string) string
	WriteArchive(ctx context.Context, w io.Writer, refs []string, arch, compression string) ([]Image, error)
}

// puller adapts image.Puller: blobs cached by digest under cacheDir.
type puller struct{ p *image.Puller }

func newImageArchiver(cacheDir string, opts CreateOptions, log *slog.Logger) imageArchiver {
	return puller{&image.Puller{
		CacheDir: cacheDir, Concurrency: opts.Concurrency, Insecure: opts.InsecureRegistry,
		Log: log, Transport: opts.RegistryTransport, Progress: opts.Progress, Overrides: opts.RegistryOverrides,
	}}
}

func (puller) ArchiveName(arch, compression string) string {
	return image.ArchiveName(arch, compression)
}

func (p puller) WriteArchive(ctx context.Context, w io.Writer, refs []string, arch, compression string) ([]Image, error) {
	sum, err := p.p.WriteArchive(ctx, w, refs, arch, compression)
	if err != nil {
		return nil, err
	}
	out := make([]Image, 0, len(sum.Images))
	for _, img := range sum.Images {
		out = append(out, Image{Ref: img.Ref, Digest: img.Digest, Size: img.Size})
	}
	return out, nil
}
