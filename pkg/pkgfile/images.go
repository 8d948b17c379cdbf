package pkgfile

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

// imageArchiver writes one architecture's image archive; pkg/image does
// the pulling.
type imageArchiver interface {
	ArchiveName(arch, compression string) string
	WriteArchive(ctx context.Context, w io.Writer, refs []string, arch, compression string) ([]Image, error)
}

// TODO(pkg/image): replace with the pkg/image Puller once it lands.
func newImageArchiver(cacheDir string, opts CreateOptions, log *slog.Logger) imageArchiver {
	return noImages{}
}

type noImages struct{}

func (noImages) ArchiveName(arch, compression string) string { return "images-" + arch + ".tar" }

func (noImages) WriteArchive(context.Context, io.Writer, []string, string, string) ([]Image, error) {
	return nil, errors.New("image pulling is not available yet in this build")
}
