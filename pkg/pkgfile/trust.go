package pkgfile

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
)

// Trust refusals, for errors.Is; ErrBadSignature covers both a signature
// by a key that is not trusted and a changed manifest.yaml: an ed25519
// signature does not say which key made it.
var (
	ErrUnsigned     = errors.New("the package is not signed")
	ErrNoTrustedKey = errors.New("no key is trusted to check the signature")
)

// TrustedKey is a public key a package may be signed by, and where it was
// named ("--verify-key keys/a.pub"), so a refusal can say which to fix.
type TrustedKey struct {
	Key    ed25519.PublicKey
	Source string
}

// ID is the key's KeyID.
func (k TrustedKey) ID() string { return KeyID(k.Key) }

// LoadTrustedKey reads a public key file for a trust policy.
func LoadTrustedKey(path, source string) (TrustedKey, error) {
	pub, err := LoadPublicKey(path)
	if err != nil {
		return TrustedKey{}, err
	}
	return TrustedKey{Key: pub, Source: source}, nil
}

// TrustPolicy says which packages are trusted. With no key and no
// RequireSignature there is no policy: any intact package opens, and
// Unverified says what was not checked.
type TrustPolicy struct {
	// Keys are trusted; a package signed by any of them is.
	Keys []TrustedKey
	// RequireSignature refuses an unsigned package even with no key, and
	// then every signed one too, since none can be checked.
	RequireSignature bool
	// RequiredBy names where RequireSignature was set, for messages.
	RequiredBy string
}

// Active reports whether there is a policy to enforce.
func (t TrustPolicy) Active() bool { return len(t.Keys) > 0 || t.RequireSignature }

// KeyIDs lists the trusted keys' ids in order.
func (t TrustPolicy) KeyIDs() []string {
	ids := make([]string, len(t.Keys))
	for i, k := range t.Keys {
		ids[i] = k.ID()
	}
	return ids
}

// keys names the trusted keys and where each was given, for refusals.
func (t TrustPolicy) keys() string {
	parts := make([]string, len(t.Keys))
	for i, k := range t.Keys {
		parts[i] = "key " + k.ID()
		if k.Source != "" {
			parts[i] += " (" + k.Source + ")"
		}
	}
	return strings.Join(parts, " or ")
}

// required names where the signature was required.
func (t TrustPolicy) required() string {
	if t.RequiredBy == "" {
		return "a signature is required"
	}
	return "a signature is required (" + t.RequiredBy + ")"
}

// check applies the policy to manifest.yaml and manifest.sig (nil when the
// package has none) and returns the id of the key that verified it, or ""
// when there is no policy.
func (t TrustPolicy) check(manifest, sig []byte) (string, error) {
	switch {
	case !t.Active():
		return "", nil
	case sig == nil && len(t.Keys) == 0:
		return "", fmt.Errorf("%w (no %s), and %s; sign it with cargoship create --signing-key", ErrUnsigned, SignatureName, t.required())
	case sig == nil:
		return "", fmt.Errorf("%w (no %s), and only a package signed by %s is trusted", ErrUnsigned, SignatureName, t.keys())
	case len(t.Keys) == 0:
		return "", fmt.Errorf("the package is signed, but %w, and %s: add the signer's public key to trusted_keys or pass --verify-key",
			ErrNoTrustedKey, t.required())
	}
	raw, err := decodeSignature(sig)
	if err != nil {
		return "", fmt.Errorf("%w; only a package signed by %s is trusted", err, t.keys())
	}
	for _, k := range t.Keys {
		if ed25519.Verify(k.Key, manifest, raw) {
			return k.ID(), nil
		}
	}
	return "", fmt.Errorf("%s: %w with %s: signed by another key, or manifest.yaml was changed", SignatureName, ErrBadSignature, t.keys())
}

// Unverified is the warning for a package opened with no policy: what its
// contents were not checked against. It is "" under a policy, which
// refuses rather than warns.
func (t TrustPolicy) Unverified(p *Package) string {
	if t.Active() || p == nil {
		return ""
	}
	if p.Signed {
		return fmt.Sprintf("package %s is signed, but no key is trusted, so its signature was not checked: "+
			"its contents were checked against its own checksums only, not against a key you trust; set trusted_keys or --verify-key", p.Path)
	}
	return fmt.Sprintf("package %s is unsigned: its contents were checked against its own checksums only, "+
		"not against a key you trust; set trusted_keys or --verify-key", p.Path)
}

// policy is the trust policy Open enforces: Trust, plus PublicKey.
func (o OpenOptions) policy() TrustPolicy {
	t := o.Trust
	if o.PublicKey != nil {
		t.Keys = append([]TrustedKey{{Key: o.PublicKey}}, t.Keys...)
	}
	return t
}

// checkTrust applies the policy while the head is read, before any
// payload; with ReportTrust a refusal is kept in TrustErr for inspect to
// show, and the integrity checks go on.
func (p *Package) checkTrust(opts OpenOptions, manifest, sig []byte) error {
	p.Signed = sig != nil
	id, err := opts.policy().check(manifest, sig)
	if err != nil {
		if opts.ReportTrust {
			p.TrustErr = err
			return nil
		}
		return err
	}
	if id != "" {
		p.SignatureVerified, p.KeyID = true, id
	}
	return nil
}
