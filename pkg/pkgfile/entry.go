package pkgfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OpenEntry streams one payload entry. The reader fails at its end if the
// bytes are not the recorded ones, so a consumer that reads to EOF (an
// upload) has verified what it sent. The caller closes it.
func (p *Package) OpenEntry(name string) (io.ReadCloser, error) {
	e, ok := p.entries[name]
	if !ok {
		return nil, fmt.Errorf("package %s has no entry %s", p.Path, name)
	}
	if p.extraction != nil {
		dir, err := p.extractedDir()
		if err != nil {
			return nil, err
		}
		f, err := os.Open(extracted(dir, name))
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		return newVerifyingReader(f, f.Close, e), nil
	}
	// Verify-only: read the package again up to the entry.
	s, err := openStream(p.Path)
	if err != nil {
		return nil, err
	}
	for {
		h, err := s.next()
		if err != nil {
			_ = s.Close() // read-only: the read error is the one to report
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("package %s: missing entry %s (the file changed since it was opened)", p.Path, name)
			}
			return nil, fmt.Errorf("package %s: %w", p.Path, err)
		}
		if h.Name == name {
			return newVerifyingReader(s.tr, s.Close, e), nil
		}
	}
}

// EntryPath is the extracted copy of an entry, for callers that need a
// file (an SFTP upload that seeks, a local install); it extracts the
// package if no entry was opened yet. It is an error with VerifyOnly,
// where nothing is extracted.
func (p *Package) EntryPath(name string) (string, error) {
	if _, ok := p.entries[name]; !ok {
		return "", fmt.Errorf("package %s has no entry %s", p.Path, name)
	}
	if p.extraction == nil {
		return "", fmt.Errorf("package %s was opened verify-only; nothing was extracted", p.Path)
	}
	dir, err := p.extractedDir()
	if err != nil {
		return "", err
	}
	return extracted(dir, name), nil
}

func extracted(dir, name string) string {
	return filepath.Join(dir, filepath.FromSlash(name))
}

// Extract writes every payload entry, verified, to dir/<entry name>, plus
// manifest.yaml and checksums.txt, so `sha256sum -c checksums.txt` works
// in dir. Files are written 0644 and directories 0755. The package is read
// once more, start to end, unless an entry was opened already.
func (p *Package) Extract(dir string) error {
	if p.extraction != nil && p.extraction.has() {
		for _, e := range p.Manifest.Package.Entries {
			r, err := p.OpenEntry(e.Name)
			if err != nil {
				return err
			}
			err = writeEntry(dir, e, r)
			r.Close()
			if err != nil {
				return err
			}
		}
	} else if err := p.extractStream(dir); err != nil {
		return err
	}
	for name, data := range map[string][]byte{ManifestName: p.manifestBytes, ChecksumsName: p.checksumsBytes} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("extract %s: %w", name, err)
		}
	}
	return nil
}

func (p *Package) extractStream(dir string) error {
	s, err := openStream(p.Path)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // read-only stream: closing loses nothing
	for {
		h, err := s.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("package %s: %w", p.Path, err)
		}
		e, ok := p.entries[h.Name]
		if !ok {
			continue // manifest, signature, checksums: written from memory
		}
		if err := writeEntry(dir, e, newVerifyingReader(s.tr, nil, e)); err != nil {
			return err
		}
	}
}

func writeEntry(dir string, e Entry, r io.Reader) error {
	dst := filepath.Join(dir, filepath.FromSlash(e.Name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("extract %s: %w", e.Name, err)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("extract %s: %w", e.Name, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("extract %s: %w", e.Name, err)
	}
	return nil
}
