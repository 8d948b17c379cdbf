package pkgfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// ErrNoSBOM is Package.SBOM's error for a package that carries none.
var ErrNoSBOM = errors.New("the package carries no SBOM")

// maxSBOMSize bounds what Package.SBOM reads into memory. The SBOM grows
// by about 1 KiB per file and image; this is far beyond any real package.
const maxSBOMSize = 64 << 20

// writeSBOM renders the package's SBOM into the staging directory as the
// staged entry SBOMName.
func writeSBOM(stageDir string, d v1alpha1.Distro, fileName string, staged []stagedEntry) (stagedEntry, error) {
	entries := make([]Entry, 0, len(staged))
	for _, s := range staged {
		entries = append(entries, s.Entry)
	}
	data, err := MarshalSBOM(packageSBOM(&d, fileName, entries))
	if err != nil {
		return stagedEntry{}, err
	}
	path := filepath.Join(stageDir, filepath.FromSlash(SBOMName))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return stagedEntry{}, fmt.Errorf("write %s: %w", SBOMName, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return stagedEntry{}, fmt.Errorf("write %s: %w", SBOMName, err)
	}
	e := Entry{
		Name: SBOMName, Kind: KindSBOM, Index: -1,
		SHA256: sha256Hex(data), Size: int64(len(data)), Mode: 0o644,
	}
	return stagedEntry{Entry: e, path: path}, nil
}

// SBOM returns the package's SBOM (CycloneDX JSON), verified against its
// checksum as it is read. It is ErrNoSBOM when the package carries none:
// built with skip_sbom, or by a cargoship from before SBOMs.
func (p *Package) SBOM() ([]byte, error) {
	e, ok := p.entries[SBOMName]
	if !ok {
		return nil, fmt.Errorf("package %s: %w (built with skip_sbom, or by a cargoship that wrote none)", p.Path, ErrNoSBOM)
	}
	if p.sbom != nil {
		return p.sbom, nil
	}
	if e.Size > maxSBOMSize {
		return nil, fmt.Errorf("package %s: %s is %d bytes, more than the %d it may be", p.Path, SBOMName, e.Size, maxSBOMSize)
	}
	r, err := p.OpenEntry(SBOMName)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("package %s: %s: %w", p.Path, SBOMName, err)
	}
	return data, nil
}

// keepSBOM reads the SBOM entry through its verifying reader during a
// verify-only pass and keeps it: it is small, and comes after most of the
// payload (sbom/ sorts after images/), so reading it again for inspect
// --sbom would decompress nearly the whole package a second time.
func (p *Package) keepSBOM(vr io.Reader, e Entry) error {
	data, err := io.ReadAll(vr)
	if err != nil {
		return wrapEntryErr(e, err)
	}
	p.sbom = data
	return nil
}
