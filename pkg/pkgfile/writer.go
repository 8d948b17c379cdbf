package pkgfile

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"
)

// epoch is every entry's mtime: a package built twice from the same inputs
// is the same bytes.
var epoch = time.Unix(0, 0).UTC()

// copyBufferSize is large enough that the zstd encoder gets whole blocks
// and small enough that memory stays flat whatever the package size.
const copyBufferSize = 1 << 20

// packageWriter writes the package stream: tar, through zstd unless the
// package is uncompressed. It is the only place entry headers are made.
type packageWriter struct {
	bw  *bufio.Writer
	zw  *zstd.Encoder
	tw  *tar.Writer
	buf []byte
}

func newPackageWriter(w io.Writer, compressed bool, concurrency int) (*packageWriter, error) {
	pw := &packageWriter{bw: bufio.NewWriterSize(w, copyBufferSize), buf: make([]byte, copyBufferSize)}
	var out io.Writer = pw.bw
	if compressed {
		if concurrency < 1 {
			concurrency = 1
		}
		zw, err := zstd.NewWriter(pw.bw, zstd.WithEncoderConcurrency(concurrency), zstd.WithEncoderLevel(zstd.SpeedDefault),
			// Entropy-code literals even in blocks without matches: text-like
			// content (manifests, scripts, base64) then compresses as zstd -3 does.
			zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		pw.zw = zw
		out = zw
	}
	pw.tw = tar.NewWriter(out)
	return pw, nil
}

func header(name string, size int64, mode Mode) *tar.Header {
	return &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     size,
		Mode:     int64(mode.Perm()),
		ModTime:  epoch,
	}
}

// addBytes writes a small entry held in memory (manifest, checksums, sig).
func (pw *packageWriter) addBytes(name string, data []byte) error {
	if err := pw.tw.WriteHeader(header(name, int64(len(data)), 0o644)); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := pw.tw.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// addFile streams a staged file into the package, hashing it on the way,
// and fails when the bytes are not the ones recorded in checksums.txt (the
// staged file changed after it was hashed).
func (pw *packageWriter) addFile(e Entry, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	defer f.Close()
	if err := pw.tw.WriteHeader(header(e.Name, e.Size, e.Mode)); err != nil {
		return fmt.Errorf("write %s: %w", e.Name, err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(pw.tw, io.TeeReader(f, h), pw.buf)
	if err != nil {
		return fmt.Errorf("write %s from %s: %w", e.Name, path, err)
	}
	if n != e.Size {
		return fmt.Errorf("write %s: %s is %d bytes, %d when it was staged", e.Name, path, n, e.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != e.SHA256 {
		return fmt.Errorf("write %s: %s changed after it was staged (sha256 %s, recorded %s)", e.Name, path, got, e.SHA256)
	}
	return nil
}

// Close finishes the tar and the zstd frame and flushes.
func (pw *packageWriter) Close() error {
	if err := pw.tw.Close(); err != nil {
		return fmt.Errorf("finish tar: %w", err)
	}
	if pw.zw != nil {
		if err := pw.zw.Close(); err != nil {
			return fmt.Errorf("finish zstd: %w", err)
		}
	}
	return pw.bw.Flush()
}
