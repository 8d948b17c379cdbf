package backend

import (
	"os"
	"path/filepath"
)

// RootFile is a file a backend writes into a host's root filesystem
// verbatim.
type RootFile struct {
	Path    string // under the root, without a leading slash
	Mode    os.FileMode
	Content string
}

// WriteRootFiles writes files under root with exactly their modes,
// replacing what is at their paths.
func WriteRootFiles(root string, files []RootFile) error {
	for _, f := range files {
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		_ = os.Remove(p) // resolv.conf may be a symlink
		if err := os.WriteFile(p, []byte(f.Content), f.Mode); err != nil {
			return err
		}
		if err := os.Chmod(p, f.Mode); err != nil { // WriteFile's mode is masked by umask
			return err
		}
	}
	return nil
}
