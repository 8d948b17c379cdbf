package k8s

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A layer from the same tree is the same bytes, whatever the files'
// times; parents come before what they hold; symlinks and modes are kept.
func TestLayerTreeReproducible(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr", "sbin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr", "sbin", "tool"), []byte("#!"), 0o755))
	require.NoError(t, os.Symlink("tool", filepath.Join(root, "usr", "sbin", "alias")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr", "share", "doc", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr", "share", "doc", "x", "README"), []byte("doc"), 0o644))
	created := time.Date(2026, 4, 15, 18, 1, 22, 0, time.UTC)

	digest := func() string {
		l := newLayerTar(created)
		l.tree(root, rootfsSkip)
		l.file("/usr/local/bin/x", 0o755, []byte("bin"))
		layer, err := l.layer()
		require.NoError(t, err)
		d, err := layer.Digest()
		require.NoError(t, err)
		return d.String()
	}
	first := digest()
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, "usr", "sbin", "tool"), later, later))
	assert.Equal(t, first, digest())

	l := newLayerTar(created)
	l.tree(root, rootfsSkip)
	l.file("usr/local/bin/x", 0o755, []byte("bin"))
	layer, err := l.layer()
	require.NoError(t, err)
	rc, err := layer.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		assert.True(t, h.ModTime.Equal(created), h.Name)
		switch h.Name {
		case "usr/sbin/alias":
			assert.Equal(t, "tool", h.Linkname)
		case "usr/sbin/tool", "usr/local/bin/x":
			assert.Equal(t, int64(0o755), h.Mode)
		}
	}
	assert.Equal(t, []string{"usr/", "usr/sbin/", "usr/sbin/alias", "usr/sbin/tool", "usr/share/", "usr/local/", "usr/local/bin/", "usr/local/bin/x"}, names)
}
