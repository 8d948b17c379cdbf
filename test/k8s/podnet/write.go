package podnet

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteConflist puts data in dir/ConflistName atomically: it writes a
// temporary file beside it, syncs it and renames it over the old one, so
// the runtime, which reads the directory whenever it likes, never sees a
// half-written file. It reports whether the file changed; the same bytes
// are left alone. dir is created if missing.
func WriteConflist(dir string, data []byte) (bool, error) {
	path := filepath.Join(dir, ConflistName)
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, data):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	// The temporary name does not end in .conf or .conflist, so the
	// runtime never loads it.
	tmp, err := os.CreateTemp(dir, "."+ConflistName+".*.tmp")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename; there if a step failed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
