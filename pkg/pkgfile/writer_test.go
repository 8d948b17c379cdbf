package pkgfile

import (
	"context"
	"encoding/base64"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritePackageFailsAndCleansUpWhenAStagedFileChanged(t *testing.T) {
	dir := t.TempDir()
	staged := filepath.Join(dir, "staged")
	writeFile(t, staged, []byte("changed after hashing"), 0o600)
	e := Entry{Name: "files/0/x", Kind: KindFiles, SHA256: sha256Hex([]byte("what was hashed")), Size: 21, Mode: 0o644}
	out := t.TempDir()
	_, err := writePackage(context.Background(), filepath.Join(out, "p.tar.zst"), true, []byte("m"), nil, []byte("c"), []stagedEntry{{e, staged}})
	require.ErrorContains(t, err, "changed after it was staged")
	assert.Empty(t, dirNames(t, out), "the partial package is removed")
}

func TestFileName(t *testing.T) {
	assert.Equal(t, "cargoship-k3s-amd64-1.0.tar.zst", FileName("k3s", []string{"amd64"}, "1.0", false))
	assert.Equal(t, "cargoship-k3s-multi-1.0.tar", FileName("k3s", []string{"amd64", "arm64"}, "1.0", true))
	assert.True(t, strings.HasSuffix(FileName("x", nil, "", false), "-multi.tar.zst"))
}

// BenchmarkPackageWriter is the CPU cost of the write path alone (hash,
// tar, zstd) on incompressible-ish content, without the disk; the whole of
// create, disk included, is measured by hack/bench-create.sh.
func BenchmarkPackageWriter(b *testing.B) {
	const size = 64 << 20
	random := randomBytes(b, size/2)
	text := []byte(base64.StdEncoding.EncodeToString(randomBytes(b, size*3/8)))[:size/2]
	dir := b.TempDir()
	staged := []stagedEntry{
		{Entry{Name: "files/0/random", SHA256: sha256Hex(random), Size: int64(len(random)), Mode: 0o644}, filepath.Join(dir, "random")},
		{Entry{Name: "files/1/text", SHA256: sha256Hex(text), Size: int64(len(text)), Mode: 0o644}, filepath.Join(dir, "text")},
	}
	writeFile(b, staged[0].path, random, 0o600)
	writeFile(b, staged[1].path, text, 0o600)
	b.SetBytes(size)
	for b.Loop() {
		pw, err := newPackageWriter(io.Discard, true, runtime.GOMAXPROCS(0))
		require.NoError(b, err)
		for _, s := range staged {
			require.NoError(b, pw.addFile(s.Entry, s.path))
		}
		require.NoError(b, pw.Close())
	}
}
