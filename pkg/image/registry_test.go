package image

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
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
	"github.com/stretchr/testify/require"
)

// testRegistry is go-containerregistry's in-process registry behind a real
// HTTP server, counting the blob downloads it serves.
type testRegistry struct {
	*httptest.Server
	host string

	mu       sync.Mutex
	blobGets map[string]int // digest -> GET count
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{blobGets: map[string]int{}}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if _, dgst, ok := strings.Cut(r.URL.Path, "/blobs/"); ok {
				tr.mu.Lock()
				tr.blobGets[dgst]++
				tr.mu.Unlock()
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.Close)
	tr.host = strings.TrimPrefix(tr.URL, "http://")
	return tr
}

// totalBlobGets is the number of blob downloads served so far.
func (tr *testRegistry) totalBlobGets() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, c := range tr.blobGets {
		n += c
	}
	return n
}

// blobGetCounts copies the per-digest download counts.
func (tr *testRegistry) blobGetCounts() map[string]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[string]int{}
	for k, v := range tr.blobGets {
		out[k] = v
	}
	return out
}

func (tr *testRegistry) ref(repoTag string) string { return tr.host + "/" + repoTag }

// platformImage builds an image from layers with a config naming linux/arch.
func platformImage(t testing.TB, arch string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

func randomLayer(t testing.TB) v1.Layer {
	t.Helper()
	l, err := random.Layer(4096, types.DockerLayer)
	require.NoError(t, err)
	return l
}

// pushIndex pushes a multi-platform index of per-arch images (plus an
// attestation-style unknown/unknown entry, as BuildKit adds) under repoTag.
func (tr *testRegistry) pushIndex(t testing.TB, repoTag string, images map[string]v1.Image) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for arch, img := range images {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	att, err := random.Image(256, 1)
	require.NoError(t, err)
	idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
		Add:        att,
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}},
	})
	ref, err := name.ParseReference(tr.ref(repoTag))
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(ref, idx))
}

// pushImage pushes a single-platform image (no index) under repoTag.
func (tr *testRegistry) pushImage(t testing.TB, repoTag string, img v1.Image) {
	t.Helper()
	ref, err := name.ParseReference(tr.ref(repoTag))
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
}

// fixture is the registry content most tests use.
type fixture struct {
	reg *testRegistry
	// images[ref][arch] is what the registry holds for ref on arch.
	images map[string]map[string]v1.Image
	// shared[arch] is the layer app-a and app-b have in common.
	shared map[string]v1.Layer
}

// newFixture pushes: demo/multi:1.0 (amd64+arm64), demo/app-a:1.0 and
// demo/app-b:2.0 (amd64+arm64, sharing a base layer per arch) and
// demo/single:1.0 (one amd64 manifest, no index).
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{reg: newTestRegistry(t), images: map[string]map[string]v1.Image{}, shared: map[string]v1.Layer{}}
	add := func(repoTag string, perArch map[string]v1.Image) {
		f.reg.pushIndex(t, repoTag, perArch)
		f.images[f.reg.ref(repoTag)] = perArch
	}
	multi := map[string]v1.Image{}
	a, b := map[string]v1.Image{}, map[string]v1.Image{}
	for _, arch := range []string{"amd64", "arm64"} {
		multi[arch] = platformImage(t, arch, randomLayer(t), randomLayer(t), randomLayer(t))
		f.shared[arch] = randomLayer(t)
		a[arch] = platformImage(t, arch, f.shared[arch], randomLayer(t))
		b[arch] = platformImage(t, arch, f.shared[arch], randomLayer(t), randomLayer(t))
	}
	add("demo/multi:1.0", multi)
	add("demo/app-a:1.0", a)
	add("demo/app-b:2.0", b)
	single := platformImage(t, "amd64", randomLayer(t))
	f.reg.pushImage(t, "demo/single:1.0", single)
	f.images[f.reg.ref("demo/single:1.0")] = map[string]v1.Image{"amd64": single}
	return f
}

// expectedSummary is what the registry says an image is.
func expectedSummary(t testing.TB, ref string, img v1.Image) ImageSummary {
	t.Helper()
	d, err := img.Digest()
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	s := ImageSummary{Ref: ref, Digest: d.String(), ConfigDigest: m.Config.Digest.String(), Size: m.Config.Size}
	for _, l := range m.Layers {
		s.Layers = append(s.Layers, l.Digest.String())
		s.Size += l.Size
	}
	return s
}
