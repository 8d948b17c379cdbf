package e2eutil

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Two test packages built by two runs must be the same bytes: a two-process
// flow (apply in one run, join in a later one) would otherwise see work on
// an established node because its image or .deb changed (issue 13). Each
// build here is a run of its own: its own directory, test engine build,
// .deb, registry on a new port and create.
//
// k3s only: rke2's package is the same code with another engine name, and
// each build costs a test engine, a .deb and a 70 MiB package.
func TestTestPackageIsReproducible(t *testing.T) {
	testtier.Slow(t, "builds the test package twice (two test engines, two .debs, two registries and creates)")
	a := BuildDistroPackage(t, K3s, K3s.Version, K3s.Built)
	b := BuildDistroPackage(t, K3s, K3s.Version, K3s.Built)
	ia, ib := entryDigests(t, a.Path), entryDigests(t, b.Path)
	require.NotEmpty(t, ia)
	assert.Equal(t, ia, ib, "every entry of the index has the same digest in both packages")
	assert.Equal(t, fileDigest(t, a.Path), fileDigest(t, b.Path), "the package files are the same bytes")
	assertHardeningContent(t, a)
}

// assertHardeningContent checks the package gives phases 10 and 11 work:
// fapolicyd rules, a policy module carried as a file, a boolean and the
// file contexts, the engine binary's among them.
func assertHardeningContent(t *testing.T, tp *TestPackage) {
	t.Helper()
	p, err := pkgfile.Open(tp.Path, pkgfile.OpenOptions{})
	require.NoError(t, err)
	defer func() { _ = p.Close() }()
	osc := p.Distro.Spec.Config.OS
	assert.Contains(t, osc.Fapolicyd, FapolicydRule)
	require.NotNil(t, osc.SELinux)
	mods := p.EntriesOf(pkgfile.KindSELinux)
	require.Len(t, mods, 1, "the policy module travels in the package")
	assert.Equal(t, SELinuxModule, mods[0].Module)
	assert.True(t, osc.SELinux.Booleans[SELinuxBoolean])
	types := map[string]string{}
	for _, fc := range osc.SELinux.FileContexts {
		types[fc.Path] = fc.Type
	}
	assert.Equal(t, map[string]string{MOTDContext: MOTDType, tp.Binary: EngineExecType}, types)
}

// The image is named under a host that is not the registry's port, and
// its bytes come from a seed: two builds are one image.
func TestTestImageIsFixed(t *testing.T) {
	a, err := testImage(4<<10, 2)
	require.NoError(t, err)
	b, err := testImage(4<<10, 2)
	require.NoError(t, err)
	da, err := a.Digest()
	require.NoError(t, err)
	db, err := b.Digest()
	require.NoError(t, err)
	assert.Equal(t, da, db)
	c, err := testImage(4<<10, 3)
	require.NoError(t, err)
	dc, err := c.Digest()
	require.NoError(t, err)
	assert.NotEqual(t, da, dc, "the digest depends on the content")
}

// entryDigests is every index entry's sha256 by name.
func entryDigests(t *testing.T, path string) map[string]string {
	t.Helper()
	p, err := pkgfile.Open(path, pkgfile.OpenOptions{})
	require.NoError(t, err)
	defer func() { _ = p.Close() }()
	out := map[string]string{}
	for _, e := range p.Entries() {
		out[e.Name] = e.SHA256
	}
	return out
}

// fileDigest is the sha256 of a file.
func fileDigest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}
