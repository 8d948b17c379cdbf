package fetch

import (
	"io"
	"testing"
)

// BenchmarkFetchDownload measures a full download through the cache
// (HTTP, hashing, temp file, sync, rename) of an 8 MiB file.
func BenchmarkFetchDownload(b *testing.B) {
	content := randomBytes(b, 8<<20)
	srv := newFileServer(b, content, nil)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		f := newFetcher(b)
		if _, err := f.Fetch(b.Context(), Request{Source: srv.url("f")}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchCacheHit measures serving an 8 MiB file from the cache,
// the common case of a repeated create.
func BenchmarkFetchCacheHit(b *testing.B) {
	content := randomBytes(b, 8<<20)
	srv := newFileServer(b, content, nil)
	f := newFetcher(b)
	req := Request{Source: srv.url("f")}
	if _, err := f.Fetch(b.Context(), req, io.Discard); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		res, err := f.Fetch(b.Context(), req, io.Discard)
		if err != nil || !res.Cached {
			b.Fatal(err, res.Cached)
		}
	}
}
