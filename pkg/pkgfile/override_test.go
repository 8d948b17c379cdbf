package pkgfile

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/image"
)

// A definition names an image by a registry that does not resolve; create
// pulls it through the mirror an override names, and the package (index,
// image archive, SBOM) records the original reference with the mirror's
// digest, and build.registryOverrides the mirror used.
func TestCreateThroughARegistryOverrideRecordsTheOriginalReference(t *testing.T) {
	mirror := newTestRegistry(t)
	served := mirror.pushMultiArch(t, "team/app:1.0")
	const original = "registry.invalid/team/app:1.0"
	def := demoWithImages(t, "gz", original)

	_, err := Create(t.Context(), createOpts(t, def))
	require.ErrorContains(t, err, original, "without the override the name does not resolve")

	opts := createOpts(t, def)
	opts.RegistryOverrides, err = image.ParseRegistryOverrides([]string{"registry.invalid=" + mirror.Host})
	require.NoError(t, err)
	res := mustCreate(t, opts)
	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()

	assert.Equal(t, map[string]string{"registry.invalid": mirror.Host}, p.Distro.Build.RegistryOverrides)
	assert.Equal(t, []string{original}, p.Distro.Spec.Config.ImageConfig.Images, "the definition keeps the original")
	sbom, err := p.SBOM()
	require.NoError(t, err)
	var bom SBOM
	require.NoError(t, json.Unmarshal(sbom, &bom))
	for _, arch := range []string{"amd64", "arm64"} {
		want := mirror.digests[served][arch]
		name, _, _ := p.ImageArchive(arch)
		e, _ := p.Entry(name)
		assert.Equal(t, []Image{{Ref: original, Digest: want, Size: e.Images[0].Size}}, e.Images, arch)

		r, err := p.OpenEntry(name)
		require.NoError(t, err)
		got, err := image.ReadArchive(r)
		require.NoError(t, err)
		r.Close()
		require.Len(t, got, 1)
		assert.Equal(t, original, got[0].Ref, "the hosts import it under its original name")
		assert.Equal(t, want, got[0].Digest)

		var named []string
		for _, c := range bom.Components {
			if c.Type == "container" && slices.Contains(c.Properties, SBOMProperty{Name: "cargoship:architecture", Value: arch}) {
				named = append(named, c.Name+":"+c.Version)
			}
		}
		assert.Equal(t, []string{original}, named, arch)
	}
}
