// Package hostfs maps the paths the test engine uses onto the filesystem.
//
// The engine always works with the paths the real engine uses
// (/etc/rancher/k3s/config.yaml, /var/lib/rancher/k3s/...). Tests that run
// several engine processes on one machine set CARGOSHIP_TESTENGINE_ROOT, a
// test-only knob that puts a directory in front of every such path so the
// processes do not share /etc/rancher. cargoship never sets it; on a fleet
// host it is unset and the paths are the real ones.
package hostfs

import (
	"fmt"
	"os"
	"path/filepath"
)

// RootEnv names the test-only variable that prefixes every path.
const RootEnv = "CARGOSHIP_TESTENGINE_ROOT"

// Path is where the engine path p lives on this machine.
func Path(p string) string {
	root := os.Getenv(RootEnv)
	if root == "" {
		return p
	}
	return filepath.Join(root, p)
}

// ReadFile reads the engine path p.
func ReadFile(p string) ([]byte, error) { return os.ReadFile(Path(p)) }

// Exists reports whether the engine path p exists.
func Exists(p string) bool {
	_, err := os.Lstat(Path(p))
	return err == nil
}

// MkdirAll creates the engine directory p.
func MkdirAll(p string, mode os.FileMode) error { return os.MkdirAll(Path(p), mode) }

// WriteFile writes the engine path p atomically: a crash leaves either the
// old content or the new, never half a state file or half a certificate.
func WriteFile(p string, data []byte, mode os.FileMode) error {
	real := Path(p)
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".tmp*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename; cleans up a failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// Symlink makes the engine path link point at target (taken literally, as
// the real engine writes relative link targets), replacing what was there.
func Symlink(target, link string) error {
	real := Path(link)
	if cur, err := os.Readlink(real); err == nil && cur == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return err
	}
	_ = os.Remove(real)
	return os.Symlink(target, real)
}
