package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

const demoDef = "../../testdata/demo"

// runCLI runs cargoship with args and an environment of its own (cache and
// temp dirs under the test), returning stdout, stderr and the error.
func runCLI(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	base := map[string]string{
		"CARGOSHIP_CACHE_DIR": filepath.Join(t.TempDir(), "cache"),
		"CARGOSHIP_TMP_DIR":   t.TempDir(),
		"CARGOSHIP_CONFIG":    "",
	}
	for k, v := range env {
		base[k] = v
	}
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut, func(k string) (string, bool) {
		v, ok := base[k]
		return v, ok && v != ""
	})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestKeygenWritesAKeyPair(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	out, _, err := runCLI(t, nil, "keygen", "--out", dir)
	require.NoError(t, err)
	priv, pub := filepath.Join(dir, pkgfile.PrivateKeyFile), filepath.Join(dir, pkgfile.PublicKeyFile)
	st, err := os.Stat(priv)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	key, err := pkgfile.LoadPublicKey(pub)
	require.NoError(t, err)
	assert.Contains(t, out, pkgfile.KeyID(key))

	_, _, err = runCLI(t, nil, "keygen", "--out", dir)
	require.ErrorContains(t, err, "refusing to overwrite")
	_, _, err = runCLI(t, nil, "keygen", "--out", dir, "--force")
	require.NoError(t, err)

	p := filepath.Join(t.TempDir(), "signing.key")
	_, _, err = runCLI(t, nil, "keygen", "--private-key", p)
	require.ErrorContains(t, err, "both --private-key and --public-key")
	_, _, err = runCLI(t, nil, "keygen", "--private-key", p, "--public-key", p+".pub")
	require.NoError(t, err)
	_, err = pkgfile.LoadPrivateKey(p)
	assert.NoError(t, err)
}

func TestCreateSignInspectVerify(t *testing.T) {
	keys := t.TempDir()
	_, _, err := runCLI(t, nil, "keygen", "--out", keys)
	require.NoError(t, err)
	build := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}
	out, _, err := runCLI(t, env, "create", demoDef, "-o", build, "--signing-key", filepath.Join(keys, pkgfile.PrivateKeyFile), "--architecture", "amd64")
	require.NoError(t, err)
	pkg := strings.TrimSpace(out)
	assert.Equal(t, filepath.Join(build, "cargoship-demo-amd64-0.1.0.tar.zst"), pkg, "create prints the package path")

	pub := filepath.Join(keys, pkgfile.PublicKeyFile)
	out, _, err = runCLI(t, nil, "inspect", pkg, "--verify-key", pub)
	require.NoError(t, err)
	for _, want := range []string{"verified with key", "k3s 1.35.3-k3s1", "Architectures  amd64", "2026-01-01T00:00:00Z",
		"os/0/demo-engine", "/usr/local/bin/demo-engine", "0755", "package=binary profile=controller", "root:adm", "module demo"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "arch.txt", "an arm64-only file is not in an amd64 package")

	out, _, err = runCLI(t, nil, "inspect", pkg, "--json")
	require.NoError(t, err)
	var report struct {
		Signed, SignatureVerified bool
		Architectures             []string
		Entries                   []pkgfile.Entry
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.True(t, report.Signed)
	assert.False(t, report.SignatureVerified, "no key given")
	assert.Equal(t, []string{"amd64"}, report.Architectures)
	assert.Len(t, report.Entries, 7)
	assert.Equal(t, pkgfile.Mode(0o755), report.Entries[3].Mode)

	// Another key, and an unsigned package, are refused when a key is given.
	other := t.TempDir()
	_, _, err = runCLI(t, nil, "keygen", "--out", other)
	require.NoError(t, err)
	_, _, err = runCLI(t, nil, "inspect", pkg, "--verify-key", filepath.Join(other, pkgfile.PublicKeyFile))
	require.ErrorContains(t, err, "signature does not verify")

	unsignedDir := t.TempDir()
	out, _, err = runCLI(t, nil, "create", demoDef, "-o", unsignedDir)
	require.NoError(t, err)
	_, _, err = runCLI(t, nil, "inspect", strings.TrimSpace(out), "--verify-key", pub)
	assert.ErrorContains(t, err, "not signed")
}

func TestInspectNamesTheDamagedEntry(t *testing.T) {
	// An uncompressed package, so one byte of one entry can be changed in place.
	dir := filepath.Join(t.TempDir(), "demo")
	require.NoError(t, os.CopyFS(dir, os.DirFS(demoDef)))
	def := filepath.Join(dir, "distro.yaml")
	data, err := os.ReadFile(def)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(def, bytes.Replace(data, []byte("  version: 0.1.0\n"), []byte("  version: 0.1.0\n  uncompressed: true\n"), 1), 0o644))
	out, _, err := runCLI(t, nil, "create", dir, "-o", t.TempDir())
	require.NoError(t, err)
	pkg := strings.TrimSpace(out)
	require.True(t, strings.HasSuffix(pkg, ".tar"))
	_, _, err = runCLI(t, nil, "inspect", pkg)
	require.NoError(t, err)

	raw, err := os.ReadFile(pkg)
	require.NoError(t, err)
	at := bytes.Index(raw, []byte("echo \"demo-engine"))
	require.Positive(t, at)
	raw[at] = 'E'
	require.NoError(t, os.WriteFile(pkg, raw, 0o644))
	_, _, err = runCLI(t, nil, "inspect", pkg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "entry os/0/demo-engine: content changed")
}

func TestCreateReportsABadDefinitionWithItsLocation(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "distro.yaml")
	require.NoError(t, os.WriteFile(def, []byte("kind: ZarfDistro\nmetadata:\n  name: Bad_Name\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config: {}\n"), 0o644))
	out := t.TempDir()
	_, _, err := runCLI(t, nil, "create", dir, "-o", out)
	require.Error(t, err)
	require.ErrorContains(t, err, def+":3:")
	require.ErrorContains(t, err, "metadata.name")
	entries, _ := os.ReadDir(out)
	assert.Empty(t, entries)
}
