package pkgfile

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// OpenOptions say how much Open trusts and where it may write.
type OpenOptions struct {
	// PublicKey, when set, requires manifest.sig to verify with it; an
	// unsigned package is then refused. It is one more key of Trust.
	PublicKey ed25519.PublicKey
	// Trust is the trust policy (trust.go): which keys a signature may
	// verify with, and whether one is required.
	Trust TrustPolicy
	// ReportTrust keeps a trust refusal in Package.TrustErr instead of
	// failing, so inspect can show what it refuses.
	ReportTrust bool
	// TmpDir is where entries are extracted, the first time one is asked
	// for ("" = the system temp dir).
	TmpDir string
	// VerifyOnly checks the package without ever extracting anything
	// (inspect). OpenEntry then re-reads the package up to the entry asked
	// for.
	VerifyOnly bool
}

// Package is a verified package. Open reads it once and writes nothing.
// Entries are read back from a copy extracted under TmpDir the first time
// one is opened (the default: apply may upload many entries to many hosts,
// and a zstd stream has no random access; a converged apply opens none and
// so never extracts), or, with VerifyOnly, by re-reading the package.
// Close removes the extracted copy.
type Package struct {
	// Path is the package file.
	Path string
	// Size is the package file's size in bytes.
	Size int64
	// Manifest is manifest.yaml; Distro is its definition part.
	Manifest *Manifest
	Distro   *v1alpha1.Distro
	// Signed says the package carries manifest.sig; SignatureVerified says
	// it verified with a key of the trust policy.
	Signed            bool
	SignatureVerified bool
	// KeyID names the key the signature was verified with.
	KeyID string
	// TrustErr is the policy's refusal, kept when OpenOptions.ReportTrust.
	TrustErr error

	// extraction is the lazily extracted copy (nil with VerifyOnly).
	extraction     *extraction
	entries        map[string]Entry
	manifestBytes  []byte
	checksumsBytes []byte
	// sbom is the SBOM entry, verified, kept from the verifying pass.
	sbom []byte
}

// Open reads the package once, verifying as it goes: signature (under a
// trust policy), manifest digest, checksums.txt against the manifest, then every
// payload entry against checksums.txt, with no entry missing and none extra.
// A failure names the entry.
func Open(path string, opts OpenOptions) (*Package, error) {
	return OpenContext(context.Background(), path, opts)
}

// OpenContext is Open with cancellation: a large package takes a while.
func OpenContext(ctx context.Context, path string, opts OpenOptions) (*Package, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open package: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open package: %s is not a file", path)
	}
	p := &Package{Path: path, Size: st.Size()}
	if err := p.verify(ctx, opts); err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	if !opts.VerifyOnly {
		p.extraction = &extraction{tmpDir: opts.TmpDir}
	}
	return p, nil
}

// verify is the one pass over the package.
func (p *Package) verify(ctx context.Context, opts OpenOptions) error {
	s, err := openStream(p.Path)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // read-only stream: closing loses nothing
	sums, err := p.readHead(s, opts)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(sums))
	buf := make([]byte, copyBufferSize)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		e, listed := p.entries[h.Name]
		switch {
		case h.Name == ManifestName || h.Name == SignatureName || h.Name == ChecksumsName:
			return fmt.Errorf("entry %s appears twice", h.Name)
		case !listed:
			return fmt.Errorf("extra entry %s: not listed in %s", h.Name, ChecksumsName)
		case seen[h.Name]:
			return fmt.Errorf("entry %s appears twice", h.Name)
		}
		seen[h.Name] = true
		if err := p.checkEntry(s, e, "", buf); err != nil {
			return err
		}
	}
	var missing []string
	for name := range sums {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("missing entry %s (listed in %s, not in the package; %d missing in all)", missing[0], ChecksumsName, len(missing))
	}
	return nil
}

// readHead reads manifest.yaml, manifest.sig and checksums.txt, which come
// first, and ties them together.
func (p *Package) readHead(s *packageStream, opts OpenOptions) (Checksums, error) {
	h, err := s.next()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the package is empty")
	}
	if err != nil {
		return nil, err
	}
	if h.Name != ManifestName {
		return nil, fmt.Errorf("first entry is %s; a cargoship package starts with %s", h.Name, ManifestName)
	}
	manifest, err := s.readSmall(h, maxManifestSize)
	if err != nil {
		return nil, err
	}
	if h, err = s.next(); err != nil {
		return nil, fmt.Errorf("missing entry %s: %w", ChecksumsName, err)
	}
	var sig []byte
	if h.Name == SignatureName {
		if sig, err = s.readSmall(h, maxSignatureSize); err != nil {
			return nil, err
		}
		if h, err = s.next(); err != nil {
			return nil, fmt.Errorf("missing entry %s: %w", ChecksumsName, err)
		}
	}
	if h.Name != ChecksumsName {
		return nil, fmt.Errorf("missing entry %s: found %s where it belongs", ChecksumsName, h.Name)
	}
	sumsFile, err := s.readSmall(h, maxChecksumsSize)
	if err != nil {
		return nil, err
	}

	// The signature first: under a policy, nothing untrusted is read on.
	if err := p.checkTrust(opts, manifest, sig); err != nil {
		return nil, err
	}
	m, err := ParseManifest(manifest)
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(sumsFile); got != m.Package.Checksums {
		return nil, fmt.Errorf("%s was changed: it hashes to %s, %s records %s", ChecksumsName, got, ManifestName, m.Package.Checksums)
	}
	sums, err := ParseChecksums(sumsFile)
	if err != nil {
		return nil, err
	}
	// The index and checksums.txt must describe the same entries.
	p.entries = make(map[string]Entry, len(m.Package.Entries))
	for _, e := range m.Package.Entries {
		sum, ok := sums[e.Name]
		if !ok {
			return nil, fmt.Errorf("entry %s is in the %s index but not in %s", e.Name, ManifestName, ChecksumsName)
		}
		if sum != e.SHA256 {
			return nil, fmt.Errorf("entry %s: %s records sha256 %s, the %s index %s", e.Name, ChecksumsName, sum, ManifestName, e.SHA256)
		}
		p.entries[e.Name] = e
	}
	for name := range sums {
		if _, ok := p.entries[name]; !ok {
			return nil, fmt.Errorf("entry %s is in %s but not in the %s index", name, ChecksumsName, ManifestName)
		}
	}
	p.Manifest = m
	p.Distro = &m.Distro
	p.manifestBytes, p.checksumsBytes = manifest, sumsFile
	return sums, nil
}

// checkEntry hashes the current entry, extracting it under dir unless dir
// is "".
func (p *Package) checkEntry(s *packageStream, e Entry, dir string, buf []byte) error {
	vr := newVerifyingReader(s.tr, nil, e)
	if dir == "" {
		if e.Name == SBOMName && e.Size <= maxSBOMSize {
			return p.keepSBOM(vr, e)
		}
		_, err := io.CopyBuffer(io.Discard, vr, buf)
		return wrapEntryErr(e, err)
	}
	dst := filepath.Join(dir, filepath.FromSlash(e.Name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("extract %s: %w", e.Name, err)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("extract %s: %w", e.Name, err)
	}
	_, err = io.CopyBuffer(f, vr, buf)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("extract %s: %w", e.Name, cerr)
	}
	return wrapEntryErr(e, err)
}

func wrapEntryErr(e Entry, err error) error {
	if err == nil {
		return nil
	}
	var ee *EntryError
	if errors.As(err, &ee) {
		return err
	}
	return fmt.Errorf("entry %s: package is damaged or truncated: %w", e.Name, err)
}

// Close removes the extracted copy, if an entry was ever opened. It is
// safe to call twice.
func (p *Package) Close() error {
	if p.extraction == nil {
		return nil
	}
	return p.extraction.remove()
}

// Entries is the files index: every payload entry, sorted by name.
func (p *Package) Entries() []Entry {
	return slices.Clone(p.Manifest.Package.Entries)
}

// EntriesOf returns the entries of one kind, in definition order.
func (p *Package) EntriesOf(kind Kind) []Entry {
	var out []Entry
	for _, e := range p.Manifest.Package.Entries {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.Index - b.Index })
	return out
}

// Entry looks an entry up by name.
func (p *Package) Entry(name string) (Entry, bool) {
	e, ok := p.entries[name]
	return e, ok
}

// Arches is the architectures the package was built for.
func (p *Package) Arches() []string {
	return slices.Clone(p.Manifest.Build.Architectures)
}

// ImageArchive names the image archive for arch, with its sha256 and size;
// name is "" when the package carries no images for arch.
func (p *Package) ImageArchive(arch string) (name, sha256 string, size int64) {
	for _, e := range p.Manifest.Package.Entries {
		if e.Kind == KindImages && e.Architecture == arch {
			return e.Name, e.SHA256, e.Size
		}
	}
	return "", "", 0
}
