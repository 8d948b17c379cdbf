package pkgfile

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/image"
)

// testRegistry is go-containerregistry's in-process registry behind a real
// HTTP server, holding multi-arch images and counting blob downloads.
type testRegistry struct {
	*httptest.Server
	host string
	// digests[ref][arch] is the registry's manifest digest of ref on arch.
	digests map[string]map[string]string

	mu       sync.Mutex
	blobGets int
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{digests: map[string]map[string]string{}}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			tr.mu.Lock()
			tr.blobGets++
			tr.mu.Unlock()
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.Close)
	tr.host = strings.TrimPrefix(tr.URL, "http://")
	return tr
}

func (tr *testRegistry) blobDownloads() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.blobGets
}

// pushMultiArch pushes an index of one random image per architecture and
// returns the reference.
func (tr *testRegistry) pushMultiArch(t testing.TB, repoTag string) string {
	t.Helper()
	ref := tr.host + "/" + repoTag
	idx := v1.ImageIndex(empty.Index)
	tr.digests[ref] = map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(64<<10, 2)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		img, err = mutate.ConfigFile(img, cf)
		require.NoError(t, err)
		img = mutate.MediaType(img, types.DockerManifestSchema2)
		d, err := img.Digest()
		require.NoError(t, err)
		tr.digests[ref][arch] = d.String()
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, idx))
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
	pulled := reg.blobDownloads()
	require.Positive(t, pulled)

	second := createOpts(t, def)
	second.CacheDir, second.InsecureRegistry = cache, true
	b := mustCreate(t, second)
	assert.Equal(t, pulled, reg.blobDownloads(), "the second create pulled no blob")

	da, _ := os.ReadFile(a.Path)
	db, _ := os.ReadFile(b.Path)
	assert.Equal(t, sha256Hex(da), sha256Hex(db), "and built the same package")
}

func TestCreateFailsOnAMissingImageAndLeavesNothing(t *testing.T) {
	reg := newTestRegistry(t)
	ref := reg.pushMultiArch(t, "demo/app:1.0")
	opts := createOpts(t, demoWithImages(t, "none", ref, reg.host+"/demo/missing:9.9"))
	opts.InsecureRegistry = true
	_, err := Create(t.Context(), opts)
	require.ErrorContains(t, err, "demo/missing:9.9")
	require.ErrorContains(t, err, "spec.config.imageConfig.images")
	assert.Empty(t, dirNames(t, opts.OutputDir))
	assert.Empty(t, dirNames(t, opts.TmpDir))
}
