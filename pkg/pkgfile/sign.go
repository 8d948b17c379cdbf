package pkgfile

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

// Default key file names written by `cargoship keygen --out DIR`.
const (
	PrivateKeyFile = "cargoship.key"
	PublicKeyFile  = "cargoship.pub"
)

// ErrBadSignature is returned when manifest.sig does not verify with a
// trusted key, or is no signature at all.
var ErrBadSignature = errors.New("signature does not verify")

// GenerateKeyPair makes an ed25519 key pair from the system's randomness.
func GenerateKeyPair() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

// WriteKeyPair writes the private key as PKCS#8 PEM (mode 0600) and the
// public key as PKIX PEM (0644), the forms openssl reads. Existing files
// are refused unless overwrite is set: a lost signing key is not recoverable.
func WriteKeyPair(privPath, pubPath string, priv ed25519.PrivateKey, overwrite bool) error {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("encode private key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		return fmt.Errorf("encode public key: %w", err)
	}
	if !overwrite {
		for _, p := range []string{privPath, pubPath} {
			if _, err := os.Stat(p); err == nil {
				return fmt.Errorf("%s exists; refusing to overwrite a key (pass --force to replace it)", p)
			}
		}
	}
	if err := writeFileAtomic(privPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return writeFileAtomic(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

// writeFileAtomic writes through a temp file in the same directory, so a
// reader never sees half a key and the mode is right from the first byte.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		// Removes the temp file on failure; after the rename it is gone and
		// Remove's error (not found) is expected.
		_ = os.Remove(f.Name())
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// LoadPrivateKey reads an ed25519 private key (PKCS#8 PEM).
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	block, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 key", path, k)
	}
	return priv, nil
}

// LoadPublicKey reads an ed25519 public key (PKIX PEM).
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	block, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 key", path, k)
	}
	return pub, nil
}

func readPEM(path, wantType string) (*pem.Block, error) {
	data, err := localfile.Read(path, maxKeyFileSize)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block; want a %q PEM file", path, wantType)
	}
	if block.Type != wantType {
		return nil, fmt.Errorf("%s: a %q PEM block; want %q", path, block.Type, wantType)
	}
	return block, nil
}

// KeyID is a short, stable name for a public key: the first 16 hex digits
// of the sha256 of its PKIX encoding (what `openssl pkey -pubin -outform
// DER | sha256sum` prints).
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "invalid"
	}
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:8])
}

// signManifest makes manifest.sig: the base64 of the raw 64-byte ed25519
// signature over manifest.yaml, one line.
func signManifest(priv ed25519.PrivateKey, manifest []byte) []byte {
	sig := ed25519.Sign(priv, manifest)
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
}

// decodeSignature reads manifest.sig: one line of base64, 64 bytes raw.
func decodeSignature(sigFile []byte) ([]byte, error) {
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%s: %w: it is not a base64 ed25519 signature", SignatureName, ErrBadSignature)
	}
	return sig, nil
}

// maxKeyFileSize bounds a key file read: a PEM key is under a kilobyte.
const maxKeyFileSize = 64 << 10
