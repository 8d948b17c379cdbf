package image

import (
	"testing"

	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// newTestRegistry starts an in-process registry for one test.
func newTestRegistry(t testing.TB) *imagetest.Registry {
	t.Helper()
	reg := imagetest.NewRegistry()
	t.Cleanup(reg.Close)
	return reg
}

// platformImage builds an image from layers with a config naming linux/arch.
func platformImage(t testing.TB, arch string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := imagetest.PlatformImage(arch, layers...)
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
func pushIndex(t testing.TB, reg *imagetest.Registry, repoTag string, images map[string]v1.Image) {
	t.Helper()
	att, err := random.Image(256, 1)
	require.NoError(t, err)
	_, err = reg.PushIndex(repoTag, images, mutate.IndexAddendum{
		Add:        att,
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}},
	})
	require.NoError(t, err)
}

// fixture is the registry content most tests use.
type fixture struct {
	reg *imagetest.Registry
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
		pushIndex(t, f.reg, repoTag, perArch)
		f.images[f.reg.Ref(repoTag)] = perArch
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
	_, err := f.reg.Push("demo/single:1.0", single)
	require.NoError(t, err)
	f.images[f.reg.Ref("demo/single:1.0")] = map[string]v1.Image{"amd64": single}
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
