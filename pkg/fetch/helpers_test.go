package fetch

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newFetcher returns a Fetcher with a fresh cache and fast retries.
func newFetcher(t testing.TB) *Fetcher {
	t.Helper()
	c, err := NewCache(t.TempDir())
	require.NoError(t, err)
	return &Fetcher{Cache: c, Retries: 2, Backoff: time.Millisecond}
}

// fetchBytes runs Fetch into memory (test content is small).
func fetchBytes(t testing.TB, f *Fetcher, req Request) ([]byte, Result, error) {
	t.Helper()
	var buf bytes.Buffer
	res, err := f.Fetch(t.Context(), req, &buf)
	return buf.Bytes(), res, err
}

// dirEntries lists the names in a cache subdirectory.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// requireNoPartials proves a failure left nothing behind in the cache:
// no temporary file and no blob.
func requireNoPartials(t testing.TB, c *Cache) {
	t.Helper()
	require.Empty(t, dirEntries(t, filepath.Join(c.Dir(), "tmp")), "temporary files left in the cache")
	require.Empty(t, dirEntries(t, filepath.Join(c.Dir(), "blobs", "sha256")), "blobs stored for a failed fetch")
}
