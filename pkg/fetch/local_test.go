package fetch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

func TestFetchLocalFileRelativeToBaseDir(t *testing.T) {
	base := t.TempDir()
	content := []byte("#!/bin/sh\nexit 0\n")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "scripts", "killall.sh"), content, 0o755))

	// A local file needs no cache.
	f := &Fetcher{}
	got, res, err := fetchBytes(t, f, Request{Source: "scripts/killall.sh", BaseDir: base, Shasum: sha(content)})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, sha(content), res.SHA256)
	assert.True(t, res.Cached, "a local file downloads nothing")

	p, _, err := f.Materialize(t.Context(), Request{Source: "file://" + filepath.Join(base, "scripts", "killall.sh")})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(base, "scripts", "killall.sh"), p)
}

func TestFetchMissingLocalFileNamesPath(t *testing.T) {
	base := t.TempDir()
	_, _, err := fetchBytes(t, &Fetcher{}, Request{Source: "bin/k3s", BaseDir: base})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(base, "bin", "k3s"))
	assert.Contains(t, err.Error(), "does not exist")
}

func TestFetchLocalDirectoryIsRefused(t *testing.T) {
	base := t.TempDir()
	_, _, err := fetchBytes(t, &Fetcher{}, Request{Source: base})
	require.ErrorContains(t, err, "not a regular file")
}

func TestFetchLocalShasumMismatchNamesPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("a"), 0o600))
	expected := sha([]byte("b"))
	_, _, err := fetchBytes(t, &Fetcher{}, Request{Source: p, Shasum: expected})
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, p, mm.Source)
	assert.Equal(t, expected, mm.Expected)
	assert.Equal(t, sha([]byte("a")), mm.Actual)
}

func TestFetchUnsupportedScheme(t *testing.T) {
	_, _, err := fetchBytes(t, &Fetcher{}, Request{Source: "ftp://example.invalid/x"})
	require.ErrorContains(t, err, `scheme "ftp" is not supported`)
}
