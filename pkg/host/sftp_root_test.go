package host

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSFTPCreatesPrivateFiles: a file the session creates is 0600 at its
// first stat, before anything chmods it, and truncating a file gives a
// reader who opened it earlier none of the new content.
func TestSFTPCreatesPrivateFiles(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	conns := map[string]*Conn{
		"ssh":       connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"localhost": connect(t, localHost(), f.opts(nil, nil)),
	}
	for name, c := range conns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := c.OpenSFTP(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			dir := filepath.Join(t.TempDir(), "a", "b")
			if err := s.MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{filepath.Dir(dir), dir} {
				if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o755 {
					t.Errorf("%s: %v, %v; want a 0755 directory, as mkdir -p makes", d, fi.Mode(), err)
				}
			}

			p := filepath.Join(dir, "secret"+PartSuffix)
			fh, err := s.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("created %v, %v; want 0600 from the start", fi.Mode(), err)
			}
			_ = fh.Close()

			// an older, readable file, and a reader who has it open
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			early, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer early.Close()
			fh, err = s.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.Write([]byte("the secret")); err != nil {
				t.Fatal(err)
			}
			if err := fh.Close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := io.ReadAll(early); len(got) != 0 {
				t.Errorf("a reader of the old file read %d bytes of the new content", len(got))
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("recreated %v, %v; want 0600", fi.Mode(), err)
			}
		})
	}
}
