package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var compressions = []string{"none", "gz", "zstd"}

func newPuller(t testing.TB) *Puller {
	return &Puller{CacheDir: t.TempDir(), Concurrency: 3}
}

// writeTo writes an archive into a file (as pkgfile does) and returns its bytes.
func writeTo(t testing.TB, p *Puller, refs []string, arch, compression string) ([]byte, ArchiveSummary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), ArchiveName(arch, compression))
	f, err := os.Create(path)
	require.NoError(t, err)
	sum, err := p.WriteArchive(t.Context(), f, refs, arch, compression)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b, sum
}

// tarEntries decompresses an archive and returns entry name -> content.
func tarEntries(t testing.TB, archive []byte, compression string) (names []string, content map[string][]byte) {
	t.Helper()
	var r io.Reader = bytes.NewReader(archive)
	switch compression {
	case "gz":
		zr, err := gzip.NewReader(r)
		require.NoError(t, err)
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(r)
		require.NoError(t, err)
		defer zr.Close()
		r = zr
	}
	content = map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, content
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		names = append(names, hdr.Name)
		content[hdr.Name] = b
	}
}

func TestWriteArchiveEveryArchAndCompressionMatchesRegistry(t *testing.T) {
	fx := newFixture(t)
	refs := []string{fx.reg.Ref("demo/multi:1.0"), fx.reg.Ref("demo/app-b:2.0"), fx.reg.Ref("demo/app-a:1.0")}
	p := newPuller(t)
	for _, arch := range []string{"amd64", "arm64"} {
		var want []ImageSummary
		for _, ref := range refs {
			want = append(want, expectedSummary(t, ref, fx.images[ref][arch]))
		}
		sort.Slice(want, func(i, j int) bool { return want[i].Ref < want[j].Ref })
		for _, compression := range compressions {
			t.Run(arch+"/"+compression, func(t *testing.T) {
				archive, sum := writeTo(t, p, refs, arch, compression)
				assert.Equal(t, arch, sum.Arch)
				assert.Equal(t, int64(len(archive)), sum.Size, "Size counts the bytes written")
				assert.Equal(t, want, sum.Images, "the summary is the registry's view of each image")

				read, err := ReadArchive(bytes.NewReader(archive))
				require.NoError(t, err)
				assert.Equal(t, want, read, "reading the archive back gives the registry's digests")

				head := archive[:4]
				switch compression {
				case "gz":
					assert.Equal(t, []byte{0x1f, 0x8b}, head[:2])
				case "zstd":
					assert.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, head)
				case "none":
					_, content := tarEntries(t, archive, compression)
					assert.Contains(t, content, "manifest.json")
				}
			})
		}
	}
}

func TestWriteArchiveDockerArchiveLayout(t *testing.T) {
	fx := newFixture(t)
	a, b := fx.reg.Ref("demo/app-a:1.0"), fx.reg.Ref("demo/app-b:2.0")
	archive, _ := writeTo(t, newPuller(t), []string{b, a}, "amd64", "none")
	names, content := tarEntries(t, archive, "none")

	var manifest tarball.Manifest
	require.NoError(t, json.Unmarshal(content["manifest.json"], &manifest))
	require.Len(t, manifest, 2)
	assert.Equal(t, []string{a}, manifest[0].RepoTags, "images are in reference order, tags kept")
	assert.Equal(t, []string{b}, manifest[1].RepoTags)

	shared, err := fx.shared["amd64"].Digest()
	require.NoError(t, err)
	sharedFile := shared.Hex + ".tar.gz"
	assert.Equal(t, sharedFile, manifest[0].Layers[0])
	assert.Equal(t, sharedFile, manifest[1].Layers[0])
	count := 0
	for _, n := range names {
		if n == sharedFile {
			count++
		}
	}
	assert.Equal(t, 1, count, "the shared layer is stored once")
	// configs + 2+3 layers - 1 shared + manifest.json + index
	assert.Len(t, names, 2+4+2)
	assert.Equal(t, IndexFileName, names[len(names)-1])
	assert.Equal(t, "manifest.json", names[len(names)-2])
	for _, d := range manifest {
		assert.Contains(t, content, d.Config)
		for _, l := range d.Layers {
			assert.Contains(t, content, l)
		}
	}
}

func TestWriteArchiveSecondRunPullsNoBlob(t *testing.T) {
	fx := newFixture(t)
	refs := []string{fx.reg.Ref("demo/app-a:1.0"), fx.reg.Ref("demo/app-b:2.0"), fx.reg.Ref("demo/multi:1.0")}
	cacheDir := t.TempDir()

	first, _ := writeTo(t, &Puller{CacheDir: cacheDir}, refs, "arm64", "zstd")
	gets := fx.reg.BlobGetCounts()
	for digest, n := range gets {
		assert.Equal(t, 1, n, "blob %s pulled once, even when shared", digest)
	}
	// 3 configs + 2 + 3 + 3 layers - 1 shared.
	assert.Len(t, gets, 10)

	// A new Puller, as a new create run would have, over the same cache.
	second, _ := writeTo(t, &Puller{CacheDir: cacheDir}, refs, "arm64", "zstd")
	assert.Equal(t, 10, fx.reg.BlobGets(), "the second run pulls no blob")
	assert.Equal(t, first, second, "the same images give the same bytes")
}

func TestWriteArchiveAliasesAndDuplicates(t *testing.T) {
	fx := newFixture(t)
	a := fx.reg.Ref("demo/app-a:1.0")
	alias := fx.reg.Ref("demo/app-a:stable")
	pushIndex(t, fx.reg, "demo/app-a:stable", fx.images[a])

	archive, sum := writeTo(t, newPuller(t), []string{a, alias, "  " + a + "  "}, "amd64", "gz")
	require.Len(t, sum.Images, 2, "the duplicate reference is pulled once")
	assert.Equal(t, sum.Images[0].Digest, sum.Images[1].Digest)

	_, content := tarEntries(t, archive, "gz")
	var manifest tarball.Manifest
	require.NoError(t, json.Unmarshal(content["manifest.json"], &manifest))
	require.Len(t, manifest, 1, "one image under two names is stored once")
	assert.Equal(t, []string{a, alias}, manifest[0].RepoTags)

	read, err := ReadArchive(bytes.NewReader(archive))
	require.NoError(t, err)
	assert.Equal(t, sum.Images, read)
}

func TestWriteArchiveMissingTagNamesRef(t *testing.T) {
	fx := newFixture(t)
	missing := fx.reg.Ref("demo/app-a:9.9")
	var out bytes.Buffer
	_, err := newPuller(t).WriteArchive(t.Context(), &out, []string{fx.reg.Ref("demo/app-a:1.0"), missing}, "amd64", "none")
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)
	assert.Contains(t, err.Error(), "linux/amd64")
	assert.Contains(t, err.Error(), "not found")
	assert.Zero(t, out.Len(), "nothing is written before every image resolved")

	_, err = newPuller(t).WriteArchive(t.Context(), &out, []string{fx.reg.Ref("nosuch/repo:1")}, "amd64", "none")
	require.ErrorContains(t, err, "nosuch/repo:1")
}

func TestWriteArchiveMissingPlatformNamesRefAndArch(t *testing.T) {
	fx := newFixture(t)
	amdOnly := fx.reg.Ref("demo/amd-only:1.0")
	pushIndex(t, fx.reg, "demo/amd-only:1.0", map[string]v1.Image{"amd64": fx.images[fx.reg.Ref("demo/multi:1.0")]["amd64"]})

	_, err := newPuller(t).WriteArchive(t.Context(), io.Discard, []string{amdOnly}, "arm64", "none")
	require.Error(t, err)
	assert.Contains(t, err.Error(), amdOnly)
	assert.Contains(t, err.Error(), "linux/arm64")
	assert.Contains(t, err.Error(), "linux/amd64", "the error says what the index offers")
	assert.NotContains(t, err.Error(), "unknown", "attestation entries are not offered platforms")

	single := fx.reg.Ref("demo/single:1.0")
	_, err = newPuller(t).WriteArchive(t.Context(), io.Discard, []string{single}, "arm64", "none")
	require.Error(t, err)
	assert.Contains(t, err.Error(), single)
	assert.Contains(t, err.Error(), "linux/amd64 only, not linux/arm64")

	_, sum := writeTo(t, newPuller(t), []string{single}, "amd64", "none")
	assert.Equal(t, []ImageSummary{expectedSummary(t, single, fx.images[single]["amd64"])}, sum.Images)
}

func TestWriteArchiveRefusesBadArguments(t *testing.T) {
	p := newPuller(t)
	_, err := p.WriteArchive(t.Context(), io.Discard, []string{"busybox"}, "386", "none")
	require.ErrorContains(t, err, `"386"`)
	_, err = p.WriteArchive(t.Context(), io.Discard, []string{"busybox"}, "amd64", "xz")
	require.ErrorContains(t, err, `"xz"`)
	_, err = p.WriteArchive(t.Context(), io.Discard, nil, "amd64", "none")
	require.ErrorContains(t, err, "no images")
	_, err = p.WriteArchive(t.Context(), io.Discard, []string{"UPPER/Case:x"}, "amd64", "none")
	require.ErrorContains(t, err, "UPPER/Case:x")
	_, err = (&Puller{}).WriteArchive(t.Context(), io.Discard, []string{"busybox"}, "amd64", "none")
	require.ErrorContains(t, err, "cache")
}

// A cached layer damaged after it was stored is caught while it is copied
// into the archive, removed, and pulled again by the next run.
func TestWriteArchiveDamagedCacheBlob(t *testing.T) {
	fx := newFixture(t)
	ref := fx.reg.Ref("demo/app-a:1.0")
	cacheDir := t.TempDir()
	_, sum := writeTo(t, &Puller{CacheDir: cacheDir}, []string{ref}, "amd64", "none")

	layerHex := strings.TrimPrefix(sum.Images[0].Layers[1], "sha256:")
	blob := filepath.Join(cacheDir, "blobs", "sha256", layerHex)
	b, err := os.ReadFile(blob)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff // same size, different content
	require.NoError(t, os.WriteFile(blob, b, 0o600))

	_, err = (&Puller{CacheDir: cacheDir}).WriteArchive(t.Context(), io.Discard, []string{ref}, "amd64", "none")
	require.ErrorContains(t, err, "damaged")
	_, statErr := os.Stat(blob)
	assert.True(t, os.IsNotExist(statErr), "the damaged blob was removed")

	before := fx.reg.BlobGets()
	_, again := writeTo(t, &Puller{CacheDir: cacheDir}, []string{ref}, "amd64", "none")
	assert.Equal(t, sum.Images, again.Images)
	assert.Equal(t, before+1, fx.reg.BlobGets(), "only the damaged blob is pulled again")
}

func TestReadArchiveRefusesTamperedContent(t *testing.T) {
	fx := newFixture(t)
	archive, sum := writeTo(t, newPuller(t), []string{fx.reg.Ref("demo/app-a:1.0")}, "amd64", "none")
	names, content := tarEntries(t, archive, "none")

	layerFile := strings.TrimPrefix(sum.Images[0].Layers[0], "sha256:") + ".tar.gz"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		body := content[n]
		if n == layerFile {
			body = append([]byte(nil), body...)
			body[10] ^= 0xff
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body))}))
		_, err := tw.Write(body)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	_, err := ReadArchive(&buf)
	require.ErrorContains(t, err, layerFile)

	_, err = ReadArchive(strings.NewReader("not an archive at all, just text padding it out past a tar header............................................................................................................................................................................................................................................................................................................................................................................................................................................................................................"))
	require.Error(t, err)

	var empty bytes.Buffer
	require.NoError(t, tar.NewWriter(&empty).Close())
	_, err = ReadArchive(&empty)
	require.ErrorContains(t, err, "no manifest.json")
}

func TestArchiveName(t *testing.T) {
	assert.Equal(t, "images-amd64.tar", ArchiveName("amd64", "none"))
	assert.Equal(t, "images-amd64.tar", ArchiveName("amd64", ""))
	assert.Equal(t, "images-arm64.tar.gz", ArchiveName("arm64", "gz"))
	assert.Equal(t, "images-arm64.tar.zst", ArchiveName("arm64", "zstd"))
}
