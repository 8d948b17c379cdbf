package pkgfile

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

func TestKeyPairFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	pubKey, privKey, err := GenerateKeyPair()
	require.NoError(t, err)
	require.NoError(t, WriteKeyPair(priv, pub, privKey, false))

	st, err := os.Stat(priv)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a private key is written 0600")
	st, err = os.Stat(pub)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())

	gotPriv, err := LoadPrivateKey(priv)
	require.NoError(t, err)
	assert.True(t, privKey.Equal(gotPriv))
	gotPub, err := LoadPublicKey(pub)
	require.NoError(t, err)
	assert.True(t, pubKey.Equal(gotPub))

	err = WriteKeyPair(priv, pub, privKey, false)
	require.ErrorContains(t, err, "refusing to overwrite")
	require.NoError(t, WriteKeyPair(priv, pub, privKey, true))

	_, err = LoadPublicKey(priv)
	require.ErrorContains(t, err, `"PRIVATE KEY" PEM block; want "PUBLIC KEY"`)
	writeFile(t, filepath.Join(dir, "junk"), []byte("not pem"), 0o600)
	_, err = LoadPrivateKey(filepath.Join(dir, "junk"))
	assert.ErrorContains(t, err, "no PEM block")
}

func TestOpenSSLReadsKeysAndVerifiesTheSignature(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed; the keys are standard PKCS#8/PKIX PEM")
	}
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	_, privKey, err := GenerateKeyPair()
	require.NoError(t, err)
	require.NoError(t, WriteKeyPair(priv, pub, privKey, false))

	opts := createOpts(t, demoDir)
	opts.SigningKey = privKey
	pkg := mustCreate(t, opts).Path
	es := readPackageEntries(t, pkg)
	manifest := filepath.Join(dir, ManifestName)
	writeFile(t, manifest, es[indexOf(t, es, ManifestName)].data, 0o644)
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(es[indexOf(t, es, SignatureName)].data)))
	require.NoError(t, err)
	sigFile := filepath.Join(dir, "sig.bin")
	writeFile(t, sigFile, sig, 0o644)

	// The documented way to check a package without cargoship.
	out, err := exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", manifest, "-sigfile", sigFile).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "Signature Verified Successfully")

	writeFile(t, manifest, append(es[indexOf(t, es, ManifestName)].data, '\n'), 0o644)
	out, err = exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", manifest, "-sigfile", sigFile).CombinedOutput()
	assert.Error(t, err, "a changed manifest fails openssl too: %s", out)
}

func TestLoadKeyRefusesSpecialFiles(t *testing.T) {
	_, err := LoadPublicKey("/dev/zero")
	require.ErrorIs(t, err, localfile.ErrNotRegular)
	_, err = LoadPrivateKey("/dev/zero")
	require.ErrorIs(t, err, localfile.ErrNotRegular)
}
