package pkgfile

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrustPolicyMatrix is issue 11's matrix: without a policy every
// intact package opens with a warning; with one, only a package signed by
// a trusted key opens, and every refusal names the package and the keys.
func TestTrustPolicyMatrix(t *testing.T) {
	signed, pub := signedDemo(t)
	unsigned := mustCreate(t, createOpts(t, demoDir)).Path
	other, _, err := GenerateKeyPair()
	require.NoError(t, err)
	// The signature's bytes changed but still base64 of 64 bytes, so it is
	// checked, and fails, rather than refused as malformed.
	badSig := tampered(t, signed, func(es []tarEntry) []tarEntry {
		i := indexOf(t, es, SignatureName)
		raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(es[i].data)))
		require.NoError(t, err)
		raw[10] ^= 0x01
		es[i].data = []byte(base64.StdEncoding.EncodeToString(raw) + "\n")
		return es
	})
	garbledSig := tampered(t, signed, func(es []tarEntry) []tarEntry {
		es[indexOf(t, es, SignatureName)].data = []byte("not a signature\n")
		return es
	})
	trusted := TrustedKey{Key: pub, Source: "--verify-key right.pub"}
	wrong := TrustedKey{Key: other, Source: "trusted_keys[0] in cargoship-config.yaml"}

	cases := []struct {
		name    string
		pkg     string
		policy  TrustPolicy
		wantErr error
		want    []string // in the error, or in the warning when wantErr is nil
		keyID   string   // the key that verified it
	}{
		{"no policy, unsigned: warn", unsigned, TrustPolicy{}, nil,
			[]string{"package " + unsigned + " is unsigned", "checked against its own checksums only", "set trusted_keys or --verify-key"}, ""},
		{"no policy, signed: warn", signed, TrustPolicy{}, nil,
			[]string{"package " + signed + " is signed, but no key is trusted", "its signature was not checked", "set trusted_keys or --verify-key"}, ""},
		{"policy, unsigned: refuse", unsigned, TrustPolicy{Keys: []TrustedKey{trusted}}, ErrUnsigned,
			[]string{"not signed (no manifest.sig), and only a package signed by key " + KeyID(pub) + " (--verify-key right.pub) is trusted"}, ""},
		{"policy, wrong key: refuse", signed, TrustPolicy{Keys: []TrustedKey{wrong}}, ErrBadSignature,
			[]string{"signature does not verify with key " + KeyID(other), "trusted_keys[0] in cargoship-config.yaml"}, ""},
		{"policy, right key: open", signed, TrustPolicy{Keys: []TrustedKey{trusted}}, nil, nil, KeyID(pub)},
		{"policy, right key among several: open", signed, TrustPolicy{Keys: []TrustedKey{wrong, trusted}}, nil, nil, KeyID(pub)},
		{"policy, tampered signature: refuse", badSig, TrustPolicy{Keys: []TrustedKey{wrong, trusted}}, ErrBadSignature,
			[]string{"signature does not verify with key " + KeyID(other) + " (trusted_keys[0] in cargoship-config.yaml) or key " + KeyID(pub) + " (--verify-key right.pub)"}, ""},
		{"policy, garbled signature: refuse", garbledSig, TrustPolicy{Keys: []TrustedKey{trusted}}, ErrBadSignature,
			[]string{"not a base64 ed25519 signature", KeyID(pub)}, ""},
		{"require signature, unsigned: refuse", unsigned, TrustPolicy{RequireSignature: true, RequiredBy: "CARGOSHIP_REQUIRE_SIGNATURE"}, ErrUnsigned,
			[]string{"a signature is required (CARGOSHIP_REQUIRE_SIGNATURE)", "cargoship create --signing-key"}, ""},
		{"require signature, signed, no key: refuse", signed, TrustPolicy{RequireSignature: true}, ErrNoTrustedKey,
			[]string{"signed, but no key is trusted", "trusted_keys or pass --verify-key"}, ""},
		{"require signature, right key: open", signed, TrustPolicy{RequireSignature: true, Keys: []TrustedKey{trusted}}, nil, nil, KeyID(pub)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, verifyOnly := range []bool{true, false} {
				tmp := t.TempDir()
				p, err := Open(tc.pkg, OpenOptions{Trust: tc.policy, TmpDir: tmp, VerifyOnly: verifyOnly})
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					require.ErrorContains(t, err, "package "+tc.pkg+":", "the refusal names the package")
					for _, w := range tc.want {
						require.ErrorContains(t, err, w)
					}
					assert.Empty(t, dirNames(t, tmp), "nothing of a refused package is extracted")
					continue
				}
				require.NoError(t, err)
				warning := tc.policy.Unverified(p)
				for _, w := range tc.want {
					assert.Contains(t, warning, w)
				}
				if tc.keyID != "" {
					assert.Empty(t, warning, "a verified package needs no warning")
					assert.True(t, p.SignatureVerified)
					assert.Equal(t, tc.keyID, p.KeyID)
				} else {
					assert.False(t, p.SignatureVerified)
				}
				require.NoError(t, p.Close())
			}
		})
	}
}

// TestOpenPublicKeyJoinsThePolicy: the older single key is one more
// trusted key, not a replacement of the policy's.
func TestOpenPublicKeyJoinsThePolicy(t *testing.T) {
	signed, pub := signedDemo(t)
	other, _, err := GenerateKeyPair()
	require.NoError(t, err)
	p, err := Open(signed, OpenOptions{PublicKey: other, Trust: TrustPolicy{Keys: []TrustedKey{{Key: pub}}}, VerifyOnly: true})
	require.NoError(t, err)
	assert.Equal(t, KeyID(pub), p.KeyID)
}

// TestOpenReportTrustKeepsTheRefusal is inspect's mode: the refusal is
// kept, the integrity checks still run and still fail on their own.
func TestOpenReportTrustKeepsTheRefusal(t *testing.T) {
	unsigned := mustCreate(t, createOpts(t, demoDir)).Path
	pub, _, err := GenerateKeyPair()
	require.NoError(t, err)
	policy := TrustPolicy{Keys: []TrustedKey{{Key: pub}}}
	p, err := Open(unsigned, OpenOptions{Trust: policy, VerifyOnly: true, ReportTrust: true})
	require.NoError(t, err)
	require.ErrorIs(t, p.TrustErr, ErrUnsigned)
	assert.False(t, p.SignatureVerified)
	assert.NotEmpty(t, p.Entries())

	damaged := tampered(t, unsigned, func(es []tarEntry) []tarEntry {
		i := indexOf(t, es, "os/0/demo-engine")
		es[i].data = flipByte(es[i].data, 20)
		return es
	})
	_, err = Open(damaged, OpenOptions{Trust: policy, VerifyOnly: true, ReportTrust: true})
	require.ErrorContains(t, err, "entry os/0/demo-engine")
}

func TestLoadTrustedKey(t *testing.T) {
	dir := t.TempDir()
	pub, priv, err := GenerateKeyPair()
	require.NoError(t, err)
	require.NoError(t, WriteKeyPair(filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile), priv, false))
	k, err := LoadTrustedKey(filepath.Join(dir, PublicKeyFile), "flag")
	require.NoError(t, err)
	assert.True(t, pub.Equal(k.Key))
	assert.Equal(t, KeyID(pub), k.ID())
	_, err = LoadTrustedKey(filepath.Join(dir, "missing.pub"), "flag")
	assert.ErrorContains(t, err, "missing.pub")
}
