package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteLocalFileIsAtomicAndIdempotent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "kubeconfig")
	mode := func() os.FileMode {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}

	changed, err := WriteLocalFile(path, []byte("one"), 0o600)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, os.FileMode(0o600), mode())

	changed, err = WriteLocalFile(path, []byte("one"), 0o600)
	require.NoError(t, err)
	assert.False(t, changed, "the same content at the same mode is left alone")

	require.NoError(t, os.Chmod(path, 0o644))
	changed, err = WriteLocalFile(path, []byte("one"), 0o600)
	require.NoError(t, err)
	assert.True(t, changed, "a readable kubeconfig is made private again")
	assert.Equal(t, os.FileMode(0o600), mode())

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(path, link))
	changed, err = WriteLocalFile(link, []byte("two"), 0o600)
	require.NoError(t, err)
	assert.True(t, changed)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(got), "a symlink's target is written")
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the symlink stays one")

	left, err := filepath.Glob(filepath.Join(dir, "sub", ".*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temp file is left behind")

	_, err = WriteLocalFile(dir, []byte("x"), 0o600)
	assert.ErrorContains(t, err, "not a regular file")
}
