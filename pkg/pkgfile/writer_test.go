package pkgfile

import (
	"context"
	"path/filepath"
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
