package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// newKey writes a key pair as `cargoship keygen --out dir` does.
func newKey(t *testing.T, dir string) (priv, pub string) {
	t.Helper()
	_, k, err := pkgfile.GenerateKeyPair()
	require.NoError(t, err)
	priv, pub = filepath.Join(dir, pkgfile.PrivateKeyFile), filepath.Join(dir, pkgfile.PublicKeyFile)
	require.NoError(t, pkgfile.WriteKeyPair(priv, pub, k, false))
	return priv, pub
}

func TestSignVerify(t *testing.T) {
	dir := t.TempDir()
	priv, pub := newKey(t, dir)
	_, otherPub := newKey(t, t.TempDir())
	file := filepath.Join(dir, "checksums.txt")
	require.NoError(t, os.WriteFile(file, []byte("abc  cargoship_0.1.0_linux_amd64.tar.gz\n"), 0o644))
	sig := file + SignatureSuffix
	require.NoError(t, SignFile(priv, file, sig))
	require.NoError(t, VerifyFile(pub, file, sig))

	require.ErrorIs(t, VerifyFile(otherPub, file, sig), ErrBadSignature, "another key")
	require.NoError(t, os.WriteFile(file, []byte("abd  cargoship_0.1.0_linux_amd64.tar.gz\n"), 0o644))
	require.ErrorIs(t, VerifyFile(pub, file, sig), ErrBadSignature, "a changed file")
	require.NoError(t, os.WriteFile(sig, []byte("not base64\n"), 0o644))
	require.ErrorIs(t, VerifyFile(pub, file, sig), ErrBadSignature, "no signature")
}

// The signature is the one docs/release.md tells users to check with
// openssl, which needs no cargoship.
func TestSignatureVerifiesWithOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("no openssl on PATH")
	}
	dir := t.TempDir()
	priv, pub := newKey(t, dir)
	file := filepath.Join(dir, "checksums.txt")
	require.NoError(t, os.WriteFile(file, []byte("abc  x.tar.gz\n"), 0o644))
	require.NoError(t, SignFile(priv, file, file+SignatureSuffix))
	raw := filepath.Join(dir, "checksums.txt.sig.bin")
	out, err := exec.Command("sh", "-c", `base64 -d "$1" > "$2"`, "sh", file+SignatureSuffix, raw).CombinedOutput()
	require.NoError(t, err, "%s", out)
	verify := func() ([]byte, error) {
		return exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", file, "-sigfile", raw).CombinedOutput()
	}
	out, err = verify()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.WriteFile(file, []byte("abd  x.tar.gz\n"), 0o644))
	_, err = verify()
	require.Error(t, err, "openssl verified a changed file")
}
