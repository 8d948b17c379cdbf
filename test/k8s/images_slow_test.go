package k8s

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileSum is a file's sha256.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// Two image builds from the same binaries are the same images, to the
// byte: same manifest digests as the cached build, same tarballs.
func TestSlowImagesReproducible(t *testing.T) {
	r := V1_35_4
	a := built(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	created, err := releaseTime(ctx, r)
	require.NoError(t, err)
	rootfs := filepath.Join(a.Dir, "parts", "kube-proxy-rootfs", "rootfs")
	var runs [2][]Image
	for i := range runs {
		runs[i], err = buildImages(r, a.BinDir, rootfs, created, filepath.Join(t.TempDir(), "images"))
		require.NoError(t, err)
	}
	require.Len(t, runs[0], len(a.Images))
	for i, img := range a.Images {
		assert.Equal(t, img.Digest, runs[0][i].Digest, img.Ref)
		assert.Equal(t, img.Digest, runs[1][i].Digest, img.Ref)
		assert.Equal(t, fileSum(t, runs[0][i].Tarball), fileSum(t, runs[1][i].Tarball), img.Ref)
		assert.Equal(t, fileSum(t, img.Tarball), fileSum(t, runs[1][i].Tarball), img.Ref)
	}
}
