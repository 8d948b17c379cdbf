package host

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
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
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	conns := f.fileConns(t)
	conns["ssh, root login"] = connect(t, f.sshHost("root"), f.opts(nil, nil))
	for name, c := range conns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")
	evil := "a;touch " + pwned
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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

// TestWriteReadExact: what WriteFile writes, ReadFile returns byte for
// byte over every transport: binary, NUL, no final newline, empty.
func TestWriteReadExact(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for i, data := range [][]byte{[]byte("line1\n\tno trailing newline \x00 binary\n\n\r"), {}, {0xff, 0xfe, 0}} {
				p := filepath.Join(dir, "sub dir", "it's $file"+itoa(i))
				if _, err := WriteFile(ctx, c, p, data, 0o640, ""); err != nil {
					t.Fatal(err)
				}
				got, exists, err := ReadFileIfExists(ctx, c, p)
				if err != nil || !exists || !bytes.Equal(got, data) {
					t.Errorf("ReadFileIfExists = %q, %v, %v; want %q", got, exists, err, data)
				}
			}
			if got, exists, err := ReadFileIfExists(ctx, c, filepath.Join(dir, "missing")); got != nil || exists || err != nil {
				t.Errorf("missing file: %q, %v, %v", got, exists, err)
			}
		})
	}
}

// localRoot is a localhost connection as root: commands run here, with
// this process's PATH, so a test can put stand-in tools first on it.
func localRoot(t *testing.T) *Conn {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: sudo go test ./pkg/host")
	}
	return connect(t, localHost(), ConnectOptions{LookupEnv: env(nil)})
}

// stubTools puts shell scripts named after tools first on PATH for the
// rest of the test.
func stubTools(t *testing.T, tools map[string]string) {
	t.Helper()
	bin := t.TempDir()
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
}

// TestWriteFileRenameFailure makes every rename fail, as it does onto a
// bind-mounted file. Without InPlace the write is an error that says what
// mv said and leaves the file and its directory as they were; with
// InPlace the file is rewritten where it is, with the mode asked for.
func TestWriteFileRenameFailure(t *testing.T) {
	c := localRoot(t)
	ctx := context.Background()
	stubTools(t, map[string]string{"mv": `echo "mv: cannot move: Device or resource busy" >&2; exit 1`})
	dir := t.TempDir()
	p := filepath.Join(dir, "hosts")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err := WriteFile(ctx, c, p, []byte("new\n"), 0o644, "")
	if err == nil || changed {
		t.Fatalf("rename failed but WriteFile = %v, %v", changed, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "Device or resource busy") || !strings.Contains(msg, p) || !strings.Contains(msg, c.String()) || strings.Contains(msg, "mktemp") {
		t.Errorf("error %q: want host, path and mv's message, not the script", msg)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("file after a failed rename: %q", b)
	}
	if _, err := WriteFile(ctx, c, filepath.Join(dir, "new"), []byte("x"), 0o644, ""); err == nil {
		t.Error("a new file whose rename fails: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	changed, err = WriteFile(ctx, c, p, []byte("new\n"), 0o644, "", InPlace())
	if err != nil || !changed {
		t.Fatalf("InPlace: %v, %v", changed, err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new\n" || err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("InPlace wrote %q, mode %v", b, st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("InPlace left behind: %v", entries)
	}
}

// TestWriteFileInPlaceBindMount bind-mounts a file, as containers do with
// /etc/hosts: renaming onto it fails (EBUSY) and only InPlace writes it.
func TestWriteFileInPlaceBindMount(t *testing.T) {
	t.Parallel()
	c := localRoot(t)
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "hosts")
	for _, p := range []string{src, dst} {
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dst).Run() })
	if _, err := WriteFile(ctx, c, dst, []byte("new\n"), 0o644, ""); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("rename onto a bind mount without InPlace: %v", err)
	}
	if changed, err := WriteFile(ctx, c, dst, []byte("new\n"), 0o644, "", InPlace()); err != nil || !changed {
		t.Fatalf("InPlace: %v, %v", changed, err)
	}
	if b, _ := os.ReadFile(src); string(b) != "new\n" {
		t.Errorf("bind-mounted file holds %q", b)
	}
	if changed, err := WriteFile(ctx, c, dst, []byte("new\n"), 0o644, "", InPlace()); err != nil || changed {
		t.Errorf("second write: %v, %v", changed, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestWriteFileRestorecon: where restorecon exists, a written file is
// relabelled; a restorecon that fails (SELinux disabled) is no error.
func TestWriteFileRestorecon(t *testing.T) {
	c := localRoot(t)
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "restorecon.log")
	stubTools(t, map[string]string{"restorecon": `printf '%s\n' "$*" >> ` + quoteForTest(log) + `; exit 1`})
	p := filepath.Join(t.TempDir(), "conf")
	if _, err := WriteFile(ctx, c, p, []byte("a"), 0o644, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(ctx, c, p, []byte("a"), 0o644, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); string(b) != p+"\n" {
		t.Errorf("restorecon ran with %q; want once with %s", b, p)
	}
}

// TestWriteFileSetuid: chown clears setuid and setgid, so the owner is set
// before the mode, when writing and when only owner and mode change.
func TestWriteFileSetuid(t *testing.T) {
	t.Parallel()
	sshd(t) // the test users
	c := localRoot(t)
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "tool")
	for _, w := range []struct {
		mode  os.FileMode
		owner string
	}{
		{0o755 | os.ModeSetuid, userNoSudo},           // a new file
		{0o750 | os.ModeSetgid, "root:" + userNoSudo}, // same content
	} {
		if changed, err := WriteFile(ctx, c, p, []byte("#!/bin/sh\n"), w.mode, w.owner); err != nil || !changed {
			t.Fatalf("WriteFile(%v, %s) = %v, %v", w.mode, w.owner, changed, err)
		}
		if fi, err := Stat(ctx, c, p); err != nil || fi.Mode != w.mode || !ownerMatches(w.owner, fi) {
			t.Errorf("Stat = %+v, %v; want %v owned by %s", fi, err, w.mode, w.owner)
		}
	}
}
