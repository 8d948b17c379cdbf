package pki

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseToken(t *testing.T) {
	hash := strings.Repeat("a1", 32)
	for _, c := range []struct {
		in, user string
		want     Token
		wantErr  string
	}{
		{in: "K10" + hash + "::server:pw", user: "node", want: Token{CAHash: hash, Username: "server", Password: "pw"}},
		{in: "K10" + hash + "::node:pw", user: "server", want: Token{CAHash: hash, Username: "node", Password: "pw"}},
		{in: "bare-password", user: "node", want: Token{Username: "node", Password: "bare-password"}},
		{in: "user:pass\n", user: "node", want: Token{Username: "user", Password: "pass"}},
		{in: "K10abc::server:pw", wantErr: "invalid token CA hash length"},
		{in: "", wantErr: "token must not be empty"},
	} {
		got, err := ParseToken(c.in, c.user)
		if c.wantErr != "" {
			require.EqualError(t, err, c.wantErr, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	assert.Equal(t, "K10"+hash+"::server:pw", Token{CAHash: hash, Username: "server", Password: "pw"}.String())
}

// The hash is SHA256 of the CA file's bytes (docs/reference/engines.md 4).
func TestCAHashIsSHA256OfTheFile(t *testing.T) {
	ca, err := NewCA("k3s-server-ca")
	require.NoError(t, err)
	sum := sha256.Sum256(ca.CertPEM)
	assert.Equal(t, hex.EncodeToString(sum[:]), CAHash(ca.CertPEM))
	assert.True(t, strings.HasPrefix(ca.Cert.Subject.CommonName, "k3s-server-ca@"))
	assert.True(t, ca.Cert.IsCA)
}

func TestIssuedCertificatesVerifyAgainstTheCA(t *testing.T) {
	ca, err := NewCA("k3s-client-ca")
	require.NoError(t, err)
	certPEM, _, err := ca.Issue(Leaf{CommonName: "system:admin", Organization: []string{"system:masters"}})
	require.NoError(t, err)
	cert, err := ParseCert(certPEM)
	require.NoError(t, err)
	require.NoError(t, cert.CheckSignatureFrom(ca.Cert))
	assert.Equal(t, []string{"system:masters"}, cert.Subject.Organization)

	other, err := NewCA("other")
	require.NoError(t, err)
	assert.Error(t, cert.CheckSignatureFrom(other.Cert))
}
