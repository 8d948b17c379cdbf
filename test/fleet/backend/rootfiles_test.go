package backend

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteRootFiles(t *testing.T) {
	root := t.TempDir()
	// resolv.conf is a symlink in a fresh debootstrap root
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	files := []RootFile{
		{Path: "etc/resolv.conf", Mode: 0o644, Content: "nameserver 127.0.0.1\n"},
		{Path: "etc/sudoers.d/tester", Mode: 0o440, Content: "tester ALL=(ALL) NOPASSWD:ALL\n"},
	}
	if err := WriteRootFiles(root, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(root, f.Path)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != f.Mode {
			t.Errorf("%s: mode %v, want a file of %v whatever the umask", f.Path, fi.Mode(), f.Mode)
		}
		if b, _ := os.ReadFile(p); string(b) != f.Content {
			t.Errorf("%s: %q, want %q", f.Path, b, f.Content)
		}
	}
}
