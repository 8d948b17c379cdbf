package pkgfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// EntryError is an entry whose bytes are not the ones checksums.txt
// records: it was changed, truncated or replaced.
type EntryError struct {
	Name   string
	Reason string
}

func (e *EntryError) Error() string { return "entry " + e.Name + ": " + e.Reason }

// verifyingReader passes an entry's bytes through and, at the end, fails
// the read that would return io.EOF when the size or sha256 is not the one
// checksums.txt recorded. A consumer that reads to EOF has therefore
// checked what it read.
type verifyingReader struct {
	r      io.Reader
	closer func() error
	name   string
	want   string
	size   int64
	n      int64
	h      hash.Hash
}

func newVerifyingReader(r io.Reader, closer func() error, e Entry) *verifyingReader {
	return &verifyingReader{r: r, closer: closer, name: e.Name, want: e.SHA256, size: e.Size, h: sha256.New()}
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.size {
		return n, &EntryError{v.name, fmt.Sprintf("more than the %d bytes recorded", v.size)}
	}
	if err == io.EOF {
		if v.n != v.size {
			return n, &EntryError{v.name, fmt.Sprintf("%d bytes, %d recorded", v.n, v.size)}
		}
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, &EntryError{v.name, fmt.Sprintf("content changed: sha256 %s, %s records %s", got, ChecksumsName, v.want)}
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error {
	if v.closer == nil {
		return nil
	}
	return v.closer()
}
