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
		"CARGOSHIP_SETTINGS":  "",
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
	assert.Len(t, report.Entries, 8, "7 files and the SBOM")
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

// unreachableInventory is a one-host inventory listening nowhere: a run
// that got as far as a host fails connecting, not with a trust refusal.
func unreachableInventory(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cluster.yaml")
	require.NoError(t, os.WriteFile(p, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: Cluster\nmetadata: {name: unreachable}\n"+
		"spec:\n  config: {loadbalancer: 127.0.0.1}\n  hosts:\n    - role: single\n      ssh: {address: 127.0.0.1, port: 1, user: nobody}\n"), 0o644))
	return p
}

// trustFixture builds the demo package signed and unsigned, the signing
// key's public half, a stranger's, and a settings file trusting the
// signer through a path relative to the settings file.
type trustFixture struct {
	signed, unsigned, pub, otherPub, settings string
}

func newTrustFixture(t *testing.T) trustFixture {
	t.Helper()
	var f trustFixture
	keys, other := t.TempDir(), t.TempDir()
	for _, dir := range []string{keys, other} {
		_, _, err := runCLI(t, nil, "keygen", "--out", dir)
		require.NoError(t, err)
	}
	f.pub, f.otherPub = filepath.Join(keys, pkgfile.PublicKeyFile), filepath.Join(other, pkgfile.PublicKeyFile)
	out, _, err := runCLI(t, nil, "create", demoDef, "-o", t.TempDir(), "--architecture", "amd64", "--signing-key", filepath.Join(keys, pkgfile.PrivateKeyFile))
	require.NoError(t, err)
	f.signed = strings.TrimSpace(out)
	out, _, err = runCLI(t, nil, "create", demoDef, "-o", t.TempDir(), "--architecture", "amd64")
	require.NoError(t, err)
	f.unsigned = strings.TrimSpace(out)

	conf := t.TempDir()
	pem, err := os.ReadFile(f.pub)
	require.NoError(t, err)
	writeFile(t, filepath.Join(conf, "keys", "site.pub"), string(pem))
	f.settings = filepath.Join(conf, SettingsFileName)
	writeFile(t, f.settings, "trusted_keys: [keys/site.pub]\n")
	return f
}

func keyIDOf(t *testing.T, path string) string {
	t.Helper()
	k, err := pkgfile.LoadPublicKey(path)
	require.NoError(t, err)
	return pkgfile.KeyID(k)
}

// TestInstallTrustPolicyRefusesBeforeAnyHost: under a policy, apply,
// prepare and reset refuse an untrusted package while loading, so the
// unreachable host is never tried and no summary is printed.
func TestInstallTrustPolicyRefusesBeforeAnyHost(t *testing.T) {
	f := newTrustFixture(t)
	inv := unreachableInventory(t)
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr error
		want    []string
	}{
		{"apply --verify-key, unsigned", nil, []string{"apply", f.unsigned, "--verify-key", f.pub},
			pkgfile.ErrUnsigned, []string{"package " + f.unsigned, keyIDOf(t, f.pub), "--verify-key " + f.pub}},
		{"apply --verify-key, another key", nil, []string{"apply", f.signed, "--verify-key", f.otherPub},
			pkgfile.ErrBadSignature, []string{"package " + f.signed, keyIDOf(t, f.otherPub)}},
		{"apply trusted_keys, unsigned", map[string]string{"CARGOSHIP_SETTINGS": f.settings}, []string{"apply", f.unsigned},
			pkgfile.ErrUnsigned, []string{"package " + f.unsigned, keyIDOf(t, f.pub), "trusted_keys[0] in " + f.settings}},
		{"apply CARGOSHIP_REQUIRE_SIGNATURE, unsigned", map[string]string{"CARGOSHIP_REQUIRE_SIGNATURE": "true"}, []string{"apply", f.unsigned},
			pkgfile.ErrUnsigned, []string{"package " + f.unsigned, "CARGOSHIP_REQUIRE_SIGNATURE"}},
		{"apply CARGOSHIP_REQUIRE_SIGNATURE, signed, no key", map[string]string{"CARGOSHIP_REQUIRE_SIGNATURE": "true"}, []string{"apply", f.signed},
			pkgfile.ErrNoTrustedKey, []string{"package " + f.signed}},
		{"prepare trusted_keys, another key", map[string]string{"CARGOSHIP_SETTINGS": f.settings}, []string{"prepare", f.signed, "--verify-key", f.otherPub},
			pkgfile.ErrBadSignature, []string{"package " + f.signed, keyIDOf(t, f.otherPub)}},
		{"reset --distro PACKAGE, unsigned", nil, []string{"reset", "--distro", f.unsigned, "--verify-key", f.pub},
			pkgfile.ErrUnsigned, []string{"package " + f.unsigned}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, logged, err := runCLI(t, tc.env, append(tc.args, "--config", inv, "--dry-run")...)
			require.ErrorIs(t, err, tc.wantErr)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			assert.NotContains(t, logged, "Connect to hosts", "no host is touched")
			assert.Empty(t, out, "a refused run prints no summary")
		})
	}

	_, _, err := runCLI(t, nil, "reset", "--config", inv, "--distro", "k3s", "--verify-key", f.pub, "--dry-run")
	require.ErrorContains(t, err, "--verify-key checks a package, and this run has none")
}

// TestApplyDryRunPastTheTrustCheck: a trusted package goes on to the
// hosts; without a policy the package goes on with a warning naming what
// was not verified. The host is unreachable, so both dry runs fail
// connecting, and the summary says the dry run is incomplete instead of
// "nothing would change" (issue 11a).
func TestApplyDryRunPastTheTrustCheck(t *testing.T) {
	f := newTrustFixture(t)
	inv := unreachableInventory(t)

	out, logged, err := runCLI(t, map[string]string{"CARGOSHIP_SETTINGS": f.settings}, "apply", f.signed, "--config", inv, "--dry-run", "--timeout", "1s")
	require.ErrorContains(t, err, `phase "Connect to hosts"`, "trusted, so on to the hosts")
	assert.Contains(t, out, "dry run incomplete")
	assert.Contains(t, logged, "package signature verified")
	assert.Contains(t, logged, keyIDOf(t, f.pub))
	assert.NotContains(t, logged, "level=WARN")

	out, logged, err = runCLI(t, nil, "apply", f.unsigned, "--config", inv, "--dry-run", "--timeout", "1s")
	require.ErrorContains(t, err, `phase "Connect to hosts"`)
	assert.Contains(t, logged, "package "+f.unsigned+" is unsigned: its contents were checked against its own checksums only, not against a key you trust; set trusted_keys or --verify-key")
	assert.Contains(t, out, `failed: phase "Connect to hosts"`)
	assert.Contains(t, out, "dry run incomplete")
	assert.NotContains(t, out, "nothing would change")

	_, logged, err = runCLI(t, nil, "prepare", f.signed, "--config", inv, "--dry-run", "--timeout", "1s")
	require.Error(t, err)
	assert.Contains(t, logged, "package "+f.signed+" is signed, but no key is trusted, so its signature was not checked")
}

// TestInspectUnderAPolicy: inspect shows a refused package, then fails.
func TestInspectUnderAPolicy(t *testing.T) {
	f := newTrustFixture(t)
	env := map[string]string{"CARGOSHIP_SETTINGS": f.settings}

	out, _, err := runCLI(t, env, "inspect", f.signed)
	require.NoError(t, err)
	assert.Contains(t, out, "verified with key "+keyIDOf(t, f.pub))

	out, _, err = runCLI(t, env, "inspect", f.unsigned)
	require.ErrorIs(t, err, pkgfile.ErrUnsigned)
	require.ErrorContains(t, err, "package "+f.unsigned+": refused")
	assert.Contains(t, out, "Signature      REFUSED: the package is not signed")
	assert.Contains(t, out, "Engine         k3s 1.35.3-k3s1", "what it holds is still shown")

	out, _, err = runCLI(t, env, "inspect", f.signed, "--verify-key", f.otherPub, "--json")
	require.ErrorIs(t, err, pkgfile.ErrBadSignature, "--verify-key replaces trusted_keys")
	var report struct{ Refused string }
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Contains(t, report.Refused, keyIDOf(t, f.otherPub))

	out, _, err = runCLI(t, env, "inspect", f.signed, "--verify-key", f.otherPub, "--verify-key", f.pub)
	require.NoError(t, err, "any of several keys")
	assert.Contains(t, out, "verified with key "+keyIDOf(t, f.pub))

	out, _, err = runCLI(t, nil, "inspect", f.signed)
	require.NoError(t, err, "no policy: inspect reports, and does not refuse")
	assert.Contains(t, out, "signed, NOT verified")
}
