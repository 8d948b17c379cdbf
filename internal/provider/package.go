package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// packageFacts is what a plan needs from the package: its digest, so a
// new package at the same path is a change, and its engine and version.
type packageFacts struct {
	SHA256, Engine, Version string
}

// readPackage verifies the package under the trust policy (without
// unpacking it) and hashes the file.
func readPackage(path string, trust pkgfile.TrustPolicy) (packageFacts, error) {
	p, err := pkgfile.Open(path, pkgfile.OpenOptions{VerifyOnly: true, Trust: trust})
	if err != nil {
		return packageFacts{}, err
	}
	facts := packageFacts{Engine: p.Distro.Spec.Type, Version: p.Distro.Spec.Version}
	_ = p.Close()
	f, err := os.Open(path)
	if err != nil {
		return facts, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return facts, fmt.Errorf("hashing %s: %w", path, err)
	}
	facts.SHA256 = hex.EncodeToString(h.Sum(nil))
	return facts, nil
}
