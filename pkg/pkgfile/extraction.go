package pkgfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// extraction is a package's copy on disk, made the first time an entry is
// opened: a converged apply, which sends nothing, never writes it, and a
// cold one writes it once however many hosts read each entry.
type extraction struct {
	tmpDir string

	mu  sync.Mutex
	dir string // "" until extracted, and again once removed
}

// extractedDir extracts the package under a new directory of TmpDir unless that
// was done, and returns the directory. A failed extraction leaves nothing
// and is tried again by the next call.
func (p *Package) extractedDir() (string, error) {
	x := p.extraction
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dir != "" {
		return x.dir, nil
	}
	dir, err := os.MkdirTemp(x.tmpDir, "cargoship-pkg-*")
	if err != nil {
		return "", fmt.Errorf("package %s: extraction directory: %w", p.Path, err)
	}
	if err := p.extractAll(dir); err != nil {
		_ = os.RemoveAll(dir) // the extraction's error is the one to report
		return "", fmt.Errorf("package %s: %w", p.Path, err)
	}
	x.dir = dir
	return dir, nil
}

// extractAll reads the package once more, writing every payload entry
// under dir through its verifying reader: the file may have changed since
// Open verified it, and what is extracted is what gets sent.
func (p *Package) extractAll(dir string) error {
	s, err := openStream(p.Path)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // read-only stream: closing loses nothing
	buf := make([]byte, copyBufferSize)
	seen := 0
	for {
		h, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		e, ok := p.entries[h.Name]
		if !ok {
			continue // manifest, signature, checksums: held in memory
		}
		if err := p.checkEntry(s, e, dir, buf); err != nil {
			return err
		}
		seen++
	}
	if seen != len(p.entries) {
		return fmt.Errorf("%d of %d entries found: the file changed since it was opened", seen, len(p.entries))
	}
	return nil
}

// has reports whether the copy exists.
func (x *extraction) has() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.dir != ""
}

// remove deletes the extracted copy, if any.
func (x *extraction) remove() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dir == "" {
		return nil
	}
	err := os.RemoveAll(x.dir)
	x.dir = ""
	return err
}
