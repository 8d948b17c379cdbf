package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileConns are the connections the file helpers are tested over: every
// mode, and a user whose sudo takes a password on the same stdin the data
// goes through.
func (f *fixture) fileConns(t *testing.T) map[string]*Conn {
	conns := f.modes(t)
	h := f.sshHost(userPW)
	h.SudoPasswordEnv = "CSTEST_SUDO"
	conns["ssh, sudo -S"] = connect(t, h, f.opts(nil, map[string]string{"CSTEST_SUDO": f.password}))
	return conns
}

func TestWriteFileIdempotent(t *testing.T) {
	f := sshd(t)
	ctx := context.Background()
	conns := f.fileConns(t)
	conns["ssh, root login"] = connect(t, f.sshHost("root"), f.opts(nil, nil))
	for name, c := range conns {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "new", "sub", "conf")
			data := []byte("key: value\n")
			changed, err := WriteFile(ctx, c, p, data, 0o640, userNoSudo+":"+userNoSudo)
			if err != nil || !changed {
				t.Fatalf("first write: changed=%v, %v", changed, err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != string(data) {
				t.Fatalf("content %q, %v", got, err)
			}
			fi, err := Stat(ctx, c, p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode != 0o640 || fi.Owner() != userNoSudo+":"+userNoSudo || fi.Size != int64(len(data)) {
				t.Errorf("stat = %+v; want 0640 %s:%s", fi, userNoSudo, userNoSudo)
			}
			if changed, err := WriteFile(ctx, c, p, data, 0o640, userNoSudo+":"+userNoSudo); err != nil || changed {
				t.Errorf("second write: changed=%v, %v; want no change", changed, err)
			}
			// only the mode differs: fixed in place
			if changed, err := WriteFile(ctx, c, p, data, 0o600, ""); err != nil || !changed {
				t.Errorf("mode change: changed=%v, %v", changed, err)
			}
			fi, _ = Stat(ctx, c, p)
			if fi.Mode != 0o600 || fi.User != userNoSudo {
				t.Errorf("after the mode change: %+v; want 0600 and the owner kept", fi)
			}
			if changed, err := WriteFile(ctx, c, p, []byte("other"), 0, ""); err != nil || !changed {
				t.Errorf("content change: changed=%v, %v", changed, err)
			}
			fi, _ = Stat(ctx, c, p)
			if fi.Mode != 0o600 || fi.User != userNoSudo {
				t.Errorf("mode 0 and owner \"\" should keep the file's: %+v", fi)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "new", "sub", ".*"))
			if len(left) != 0 {
				t.Errorf("temp files left behind: %v", left)
			}
		})
	}
}

func TestFilesQuoteValues(t *testing.T) {
	f := sshd(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")
	evil := "a;touch " + pwned
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, p := range []string{
				filepath.Join(dir, evil),
				filepath.Join(dir, "$(touch "+pwned+")"),
				filepath.Join(dir, "it's `touch "+pwned+"`"),
				filepath.Join(dir, "-rf"),
			} {
				if _, err := WriteFile(ctx, c, p, []byte(evil), 0o644, ""); err != nil {
					t.Fatalf("WriteFile(%q): %v", p, err)
				}
				got, err := ReadFile(ctx, c, p)
				if err != nil || string(got) != evil {
					t.Errorf("ReadFile(%q) = %q, %v; want %q", p, got, err, evil)
				}
				if out, err := c.Sudo(ctx, "cat "+quoteForTest(p)); err != nil || out != evil {
					t.Errorf("cat %q = %q, %v", p, out, err)
				}
			}
			if _, err := WriteFile(ctx, c, filepath.Join(dir, "x"), nil, 0o644, "root;touch "+pwned); err == nil {
				t.Error("an owner with a ';' was accepted")
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatalf("a value ran as a command: %s exists", pwned)
			}
		})
	}
}

// quoteForTest quotes the way a careful caller would; the point of the
// test is that the helpers need no help.
func quoteForTest(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

func TestReadFileAndHash(t *testing.T) {
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			missing := filepath.Join(dir, "missing")
			if _, err := ReadFile(ctx, c, missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), c.String()) {
				t.Errorf("ReadFile(missing) = %v; want fs.ErrNotExist naming the host", err)
			}
			if _, err := Stat(ctx, c, missing); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat(missing) = %v; want fs.ErrNotExist", err)
			}
			if sum, ok, err := FileSHA256(ctx, c, missing); sum != "" || ok || err != nil {
				t.Errorf("FileSHA256(missing) = %q, %v, %v", sum, ok, err)
			}
			// a root-only file: readable through sudo only
			p := filepath.Join(dir, "secret")
			if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, err := ReadFile(ctx, c, p); err != nil || string(got) != "abc" {
				t.Errorf("ReadFile = %q, %v", got, err)
			}
			sum, ok, err := FileSHA256(ctx, c, p)
			if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; sum != want || !ok || err != nil {
				t.Errorf("FileSHA256 = %q, %v, %v; want %s", sum, ok, err, want)
			}
			if _, err := ReadFile(ctx, c, "relative/path"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
				t.Errorf("relative path: %v", err)
			}
		})
	}
}

func TestDirHelpers(t *testing.T) {
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d := filepath.Join(dir, "a", "b")
			if err := MkdirAll(ctx, c, d, 0o700); err != nil {
				t.Fatal(err)
			}
			fi, err := Stat(ctx, c, d)
			if err != nil || !fi.IsDir() || fi.Mode.Perm() != 0o700 {
				t.Errorf("Stat(dir) = %+v, %v; want a 0700 directory", fi, err)
			}
			p := filepath.Join(d, "f")
			if _, err := WriteFile(ctx, c, p, []byte("x"), 0o644, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := WriteFile(ctx, c, d, []byte("x"), 0o644, ""); err == nil || !strings.Contains(err.Error(), "directory") {
				t.Errorf("WriteFile onto a directory: %v", err)
			}
			if err := Rename(ctx, c, p, p+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := Remove(ctx, c, p+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := Remove(ctx, c, p+".moved"); err != nil {
				t.Errorf("Remove of a missing file: %v", err)
			}
			if err := RemoveAll(ctx, c, filepath.Join(dir, "a")); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
				t.Errorf("RemoveAll left %s: %v", dir, err)
			}
			if err := RemoveAll(ctx, c, "/"); err == nil {
				t.Error("RemoveAll(/) was not refused")
			}
		})
	}
}
