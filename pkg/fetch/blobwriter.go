package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
)

// BlobWriter writes one new blob into a Cache. Bytes go to a temporary file
// in the cache directory and are hashed as they pass; Commit moves the file
// into place under its digest only when the digest is the expected one.
type BlobWriter struct {
	c    *Cache
	f    *os.File
	h    hash.Hash
	n    int64
	done bool
}

// Create starts a new blob. The caller must call Commit or Abort.
func (c *Cache) Create() (*BlobWriter, error) {
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), "blob-*")
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &BlobWriter{c: c, f: f, h: sha256.New()}, nil
}

// Write appends to the blob.
func (w *BlobWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Size is the number of bytes written so far.
func (w *BlobWriter) Size() int64 { return w.n }

// Reset empties the blob, for a download that has to start again from zero.
func (w *BlobWriter) Reset() error {
	if err := w.f.Truncate(0); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if _, err := w.f.Seek(0, 0); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	w.h.Reset()
	w.n = 0
	return nil
}

// Commit finishes the blob. With expected set (hex sha256), a different
// digest is a *MismatchError and nothing is stored. It returns the digest
// and size of what was written.
func (w *BlobWriter) Commit(expected string) (sum string, size int64, err error) {
	if w.done {
		return "", 0, errors.New("cache: blob already committed or aborted")
	}
	w.done = true
	tmp := w.f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	// Synced before the rename so a crash cannot leave a named blob whose
	// content never reached the disk.
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	if err := w.f.Close(); err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	sum = hex.EncodeToString(w.h.Sum(nil))
	if expected != "" && sum != expected {
		return "", 0, &MismatchError{Expected: expected, Actual: sum}
	}
	fi, err := os.Stat(tmp)
	if err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp, w.c.BlobPath(sum)); err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	w.c.markVerified(sum, blobStamp{size: fi.Size(), modTime: fi.ModTime()})
	return sum, w.n, nil
}

// Abort discards the blob. It is safe to call after Commit.
func (w *BlobWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	_ = os.Remove(w.f.Name())
}

// MismatchError is a sha256 that is not the one expected. Source names what
// was hashed (a URL, a path, an image blob) once known.
type MismatchError struct {
	Source   string
	Expected string
	Actual   string
}

func (e *MismatchError) Error() string {
	src := e.Source
	if src == "" {
		src = "content"
	}
	return fmt.Sprintf("sha256 mismatch for %s: expected %s, got %s", src, e.Expected, e.Actual)
}
