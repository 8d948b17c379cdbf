package pkgfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/image"
	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
)

// testRegistry is an in-process registry holding multi-arch images.
type testRegistry struct {
	*imagetest.Registry
	// digests[ref][arch] is the registry's manifest digest of ref on arch.
	digests map[string]map[string]string
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{Registry: imagetest.NewRegistry(), digests: map[string]map[string]string{}}
	t.Cleanup(tr.Close)
	return tr
}

// pushMultiArch pushes an index of one random image per architecture and
// returns the reference.
func (tr *testRegistry) pushMultiArch(t testing.TB, repoTag string) string {
	t.Helper()
	images := map[string]v1.Image{}
	digests := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := imagetest.RandomImage(arch, 64<<10, 2)
		require.NoError(t, err)
		img = mutate.MediaType(img, types.DockerManifestSchema2)
		d, err := img.Digest()
		require.NoError(t, err)
		images[arch], digests[arch] = img, d.String()
	}
	ref, err := tr.PushIndex(repoTag, images)
	require.NoError(t, err)
	tr.digests[ref] = digests
	return ref
}

// demoWithImages is a copy of the demo definition that also carries refs.
func demoWithImages(t testing.TB, compression string, refs ...string) string {
	t.Helper()
	dir := copyDemo(t)
	y := fmt.Sprintf("    imageConfig:\n      compression: %s\n      images:\n", compression)
	for _, r := range refs {
		y += "        - " + r + "\n"
	}
	f, err := os.OpenFile(filepath.Join(dir, "distro.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(y)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dir
}

func TestCreateCarriesOneImageArchivePerArchitecture(t *testing.T) {
	reg := newTestRegistry(t)
	refs := []string{reg.pushMultiArch(t, "demo/app:1.0"), reg.pushMultiArch(t, "demo/tool:2.0")}
	for _, compression := range []string{"none", "gz", "zstd"} {
		t.Run(compression, func(t *testing.T) {
			opts := createOpts(t, demoWithImages(t, compression, refs...))
			opts.InsecureRegistry = true
			res := mustCreate(t, opts)
			p, err := Open(res.Path, OpenOptions{TmpDir: t.TempDir()})
			require.NoError(t, err)
			defer p.Close()

			assert.Equal(t, "/var/lib/rancher/k3s/agent/images", p.Distro.Spec.Config.ImageConfig.Path, "the engine's images dir by default")
			for _, arch := range []string{"amd64", "arm64"} {
				name, sum, size := p.ImageArchive(arch)
				require.Equal(t, "images/"+image.ArchiveName(arch, compression), name)
				e, ok := p.Entry(name)
				require.True(t, ok)
				assert.Equal(t, sum, e.SHA256)
				assert.Equal(t, size, e.Size)
				assert.Equal(t, KindImages, e.Kind)

				// Read the archive back as the engine would and compare
				// with what the registry holds for this architecture.
				r, err := p.OpenEntry(name)
				require.NoError(t, err)
				got, err := image.ReadArchive(r)
				require.NoError(t, err)
				r.Close()
				require.Len(t, got, len(refs))
				for _, img := range got {
					want := reg.digests[img.Ref][arch]
					require.NotEmpty(t, want, "archive names %s, which was not pushed", img.Ref)
					assert.Equal(t, want, img.Digest, "%s on %s", img.Ref, arch)
				}
				// The index in the manifest says the same.
				require.Len(t, e.Images, len(refs))
				for _, img := range e.Images {
					assert.Equal(t, reg.digests[img.Ref][arch], img.Digest)
				}
			}
		})
	}
}

func TestSecondCreateWithImagesDownloadsNothing(t *testing.T) {
	reg := newTestRegistry(t)
	ref := reg.pushMultiArch(t, "demo/app:1.0")
	def := demoWithImages(t, "zstd", ref)
	cache := t.TempDir()

	first := createOpts(t, def)
	first.CacheDir, first.InsecureRegistry = cache, true
	a := mustCreate(t, first)
	pulled := reg.BlobGets()
	require.Positive(t, pulled)

	second := createOpts(t, def)
	second.CacheDir, second.InsecureRegistry = cache, true
	b := mustCreate(t, second)
	assert.Equal(t, pulled, reg.BlobGets(), "the second create pulled no blob")

	da, _ := os.ReadFile(a.Path)
	db, _ := os.ReadFile(b.Path)
	assert.Equal(t, sha256Hex(da), sha256Hex(db), "and built the same package")
}

func TestCreateFailsOnAMissingImageAndLeavesNothing(t *testing.T) {
	reg := newTestRegistry(t)
	ref := reg.pushMultiArch(t, "demo/app:1.0")
	opts := createOpts(t, demoWithImages(t, "none", ref, reg.Ref("demo/missing:9.9")))
	opts.InsecureRegistry = true
	_, err := Create(t.Context(), opts)
	require.ErrorContains(t, err, "demo/missing:9.9")
	require.ErrorContains(t, err, "spec.config.imageConfig.images")
	assert.Empty(t, dirNames(t, opts.OutputDir))
	assert.Empty(t, dirNames(t, opts.TmpDir))
}
