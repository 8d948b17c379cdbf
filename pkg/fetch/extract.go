package fetch

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// archiveFormat is what an archive's first bytes say it is.
type archiveFormat int

const (
	formatTar archiveFormat = iota
	formatTarGzip
	formatTarZstd
	formatZip
)

// sniffFormat reads the magic numbers; the file name is not trusted, a
// downloaded URL often has none.
func sniffFormat(head []byte) (archiveFormat, error) {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return formatZip, nil
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return formatTarGzip, nil
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return formatTarZstd, nil
	case bytes.HasPrefix(head, []byte("BZh")):
		return 0, errors.New("bzip2 archives are not supported (use tar, tar.gz, tar.zst or zip)")
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return 0, errors.New("xz archives are not supported (use tar, tar.gz, tar.zst or zip)")
	}
	return formatTar, nil
}

// cleanEntryPath validates an extractPath: relative to the archive root and
// never climbing out of it.
func cleanEntryPath(p string) (string, error) {
	for _, elem := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if elem == ".." {
			return "", fmt.Errorf("extractPath %q is refused: it climbs out of the archive with \"..\"", p)
		}
	}
	c := normalizeEntryName(p)
	if c == "" {
		return "", fmt.Errorf("extractPath %q names no entry", p)
	}
	return c, nil
}

// normalizeEntryName makes "./bin/x", "/bin/x" and "bin//x" all "bin/x".
func normalizeEntryName(name string) string {
	c := path.Clean("/" + strings.ReplaceAll(name, `\`, "/"))
	return strings.TrimPrefix(c, "/")
}

// extractEntry copies the regular file entry of the archive at archivePath
// into w. display names the archive in errors.
func extractEntry(archivePath, display, entry string, w io.Writer) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return fmt.Errorf("archive %s: %w", display, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(8)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("archive %s: %w", display, err)
	}
	format, err := sniffFormat(head)
	if err != nil {
		return fmt.Errorf("archive %s: %w", display, err)
	}
	if format == formatZip {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("archive %s: %w", display, err)
		}
		return extractZip(f, fi.Size(), display, entry, w)
	}
	var r io.Reader = br
	switch format {
	case formatTarGzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("archive %s: gzip: %w", display, err)
		}
		defer func() { _ = zr.Close() }()
		r = zr
	case formatTarZstd:
		zr, err := zstd.NewReader(br)
		if err != nil {
			return fmt.Errorf("archive %s: zstd: %w", display, err)
		}
		defer zr.Close()
		r = zr
	}
	return extractTar(r, display, entry, w)
}

func extractTar(r io.Reader, display, entry string, w io.Writer) error {
	tr := tar.NewReader(r)
	var near []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return notFound(display, entry, near)
		}
		// Insecure names are fine here: names are only compared, never
		// used as paths on disk.
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("archive %s: not a readable tar, tar.gz, tar.zst or zip archive: %w", display, err)
		}
		name := normalizeEntryName(hdr.Name)
		if name != entry {
			near = nearby(near, name, entry)
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("archive %s: entry %s is a link to %s; name the link's target in extractPath", display, entry, hdr.Linkname)
		}
		if !hdr.FileInfo().Mode().IsRegular() {
			return fmt.Errorf("archive %s: entry %s is not a regular file", display, entry)
		}
		if _, err := io.Copy(w, tr); err != nil {
			return fmt.Errorf("archive %s: extracting %s: %w", display, entry, err)
		}
		return nil
	}
}

func extractZip(f io.ReaderAt, size int64, display, entry string, w io.Writer) error {
	zr, err := zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("archive %s: zip: %w", display, err)
	}
	var near []string
	for _, zf := range zr.File {
		name := normalizeEntryName(zf.Name)
		if name != entry {
			near = nearby(near, name, entry)
			continue
		}
		mode := zf.Mode()
		if mode&os.ModeSymlink != 0 {
			return fmt.Errorf("archive %s: entry %s is a symbolic link; name the link's target in extractPath", display, entry)
		}
		if !mode.IsRegular() {
			return fmt.Errorf("archive %s: entry %s is not a regular file", display, entry)
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("archive %s: opening %s: %w", display, entry, err)
		}
		_, err = io.Copy(w, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("archive %s: extracting %s: %w", display, entry, err)
		}
		return nil
	}
	return notFound(display, entry, near)
}

// nearby collects a few entries with the wanted base name, to suggest in the
// error when the exact path is absent (a moved directory in a new release).
func nearby(near []string, name, want string) []string {
	if len(near) < 5 && path.Base(name) == path.Base(want) {
		near = append(near, name)
	}
	return near
}

// EntryNotFoundError is an extractPath the archive does not hold.
type EntryNotFoundError struct {
	Archive string
	Entry   string
	Similar []string
}

func (e *EntryNotFoundError) Error() string {
	msg := fmt.Sprintf("archive %s has no entry %s", e.Archive, e.Entry)
	if len(e.Similar) > 0 {
		msg += " (entries with that base name: " + strings.Join(e.Similar, ", ") + ")"
	}
	return msg
}

func notFound(display, entry string, near []string) error {
	return &EntryNotFoundError{Archive: display, Entry: entry, Similar: near}
}
