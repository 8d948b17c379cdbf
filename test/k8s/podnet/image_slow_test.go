package podnet

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// Two builds of the daemon are the same static binary; the image holds it
// at BinaryPath as its entrypoint, and two images of it have one digest;
// the docker-archive tarball ctr imports keeps the image's ID.
func TestSlowBinaryAndImageAreReproducible(t *testing.T) {
	testtier.Slow(t, "builds the podnet binary twice with go build")
	ctx := context.Background()
	bin1, err := BuildBinary(ctx, filepath.Join(t.TempDir(), "one"))
	require.NoError(t, err)
	bin2, err := BuildBinary(ctx, filepath.Join(t.TempDir(), "two"))
	require.NoError(t, err)
	b1, err := os.ReadFile(bin1)
	require.NoError(t, err)
	b2, err := os.ReadFile(bin2)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b1, b2), "two builds differ")

	f, err := elf.Open(bin1)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, elf.EM_X86_64, f.Machine)
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no dynamic loader")
	}

	img1, err := Image(bin1)
	require.NoError(t, err)
	img2, err := Image(bin2)
	require.NoError(t, err)
	d1, err := img1.Digest()
	require.NoError(t, err)
	d2, err := img2.Digest()
	require.NoError(t, err)
	assert.Equal(t, d1, d2)

	mt, err := img1.MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCIManifestSchema1, mt)
	cf, err := img1.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux", cf.OS)
	assert.Equal(t, "amd64", cf.Architecture)
	assert.Equal(t, []string{BinaryPath}, cf.Config.Entrypoint)
	assert.Empty(t, cf.Config.Cmd)
	assert.Equal(t, int64(0), cf.Created.Unix())

	layers, err := img1.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		if "/"+strings.TrimPrefix(h.Name, "./") != BinaryPath {
			continue
		}
		assert.Equal(t, byte(tar.TypeReg), h.Typeflag)
		assert.Equal(t, int64(0o755), h.Mode)
		assert.Equal(t, 0, h.Uid)
		assert.Equal(t, int64(0), h.ModTime.Unix())
		content, err := io.ReadAll(tr)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(b1, content), "the layer holds the binary")
	}
	assert.Equal(t, []string{"podnet"}, names)

	ref, err := Ref(img1)
	require.NoError(t, err)
	assert.Equal(t, ImageName+":"+d1.Hex[:12], ref)
	path := filepath.Join(t.TempDir(), "podnet.tar")
	require.NoError(t, WriteTarball(img1, ref, path))
	tag, err := name.NewTag(ref)
	require.NoError(t, err)
	back, err := tarball.ImageFromPath(path, &tag)
	require.NoError(t, err)
	// A docker archive keeps the config, not the OCI manifest: the image
	// ID (the config's digest) is what survives the round trip.
	id, err := img1.ConfigName()
	require.NoError(t, err)
	idBack, err := back.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, id, idBack)
}
