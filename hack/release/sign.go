// Package release builds cargoship's release: goreleaser v2 in snapshot mode
// builds the binaries and archives and writes checksums.txt; this package
// supplies what goreleaser would otherwise fetch or run from elsewhere (an
// ed25519 signature in cargoship's own key format, a CycloneDX SBOM read
// from each binary, the shell completions and man pages), drives the run,
// and checks its result. docs/release.md says how to use it.
package release

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// SignatureSuffix names a file's signature: checksums.txt.sig.
const SignatureSuffix = ".sig"

// SignFile writes sigPath: the base64 of the raw 64-byte ed25519 signature
// over the file at path, one line, made with a `cargoship keygen` private
// key. It is the form manifest.sig has in a package (docs/package.md), so
// the same openssl line checks both.
func SignFile(keyPath, path, sigPath string) error {
	priv, err := pkgfile.LoadPrivateKey(keyPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, data)) + "\n"
	return os.WriteFile(sigPath, []byte(sig), 0o644)
}

// ErrBadSignature is a signature that does not verify, or is none.
var ErrBadSignature = errors.New("signature does not verify")

// VerifyFile checks sigPath (as SignFile writes it) over the file at path
// with a `cargoship keygen` public key.
func VerifyFile(pubPath, path, sigPath string) error {
	pub, err := pkgfile.LoadPublicKey(pubPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sigFile, err := os.ReadFile(sigPath)
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%s: %w: not a base64 ed25519 signature", sigPath, ErrBadSignature)
	}
	if !ed25519.Verify(pub, data, sig) {
		return fmt.Errorf("%s: %w with key %s over %s", sigPath, ErrBadSignature, pkgfile.KeyID(pub), path)
	}
	return nil
}
