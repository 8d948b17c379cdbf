package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
)

var (
	bootstrapTokenRE = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	caCertHashRE     = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	certificateKeyRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// CACertHash is the discovery-token-ca-cert-hash of a CA certificate
// (PEM, as in /etc/kubernetes/pki/ca.crt): sha256: and the hex SHA-256 of
// its Subject Public Key Info (RFC 7469), computed here rather than with
// an openssl pipeline on the host.
func CACertHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("the CA is not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("the CA certificate: %w", err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// NewCertificateKey is a key kubeadm encrypts uploaded control-plane
// certificates with: 32 random bytes as hex (AES-256).
func NewCertificateKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
