package pkgfile

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts every zstd frame; the package format is sniffed from it
// rather than trusted from the file name.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxWindow bounds the zstd window a package may ask for (zstd's own CLI
// default), so a hostile frame cannot make a reader allocate gigabytes.
const maxWindow = 128 << 20

// Limits on the entries Open holds in memory: a definition and its index
// are tens of kilobytes, so megabytes mean something is wrong. The
// manifest may be as large as any document (docs/validate.md#limits);
// checksums.txt lists the entries the manifest indexes, about 100 bytes
// each.
const (
	maxManifestSize  = 4 << 20
	maxChecksumsSize = 4 << 20
	maxSignatureSize = 4 << 10
)

// packageStream is one sequential read of a package: the file, the zstd
// decoder when compressed, and the tar reader over them.
type packageStream struct {
	f  *os.File
	zr *zstd.Decoder
	tr *tar.Reader
}

func openStream(path string) (*packageStream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open package: %w", err)
	}
	br := bufio.NewReaderSize(f, copyBufferSize)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("read package %s: %w", path, err)
	}
	s := &packageStream{f: f}
	var r io.Reader = br
	if bytes.Equal(head, zstdMagic) {
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read package %s: zstd: %w", path, err)
		}
		s.zr = zr
		r = zr
	}
	s.tr = tar.NewReader(r)
	return s, nil
}

// next returns the next regular-file entry, io.EOF at the end. Anything
// other than a regular file is refused: no writer of this layout makes
// one, and links or devices are how an archive escapes its directory.
func (s *packageStream) next() (*tar.Header, error) {
	h, err := s.tr.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("package is damaged or truncated: %w", err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, fmt.Errorf("entry %q is not a regular file (tar type %q); a package holds only files", h.Name, string(h.Typeflag))
	}
	if err := checkEntryName(h.Name); err != nil {
		return nil, err
	}
	return h, nil
}

// readSmall reads the current entry whole, refusing more than limit bytes.
func (s *packageStream) readSmall(h *tar.Header, limit int64) ([]byte, error) {
	if h.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d it may be", h.Name, h.Size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(s.tr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: package is damaged or truncated: %w", h.Name, err)
	}
	return b, nil
}

func (s *packageStream) Close() error {
	if s.zr != nil {
		s.zr.Close()
	}
	return s.f.Close()
}
