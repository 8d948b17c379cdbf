package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMkdirsRelabelsOnlyWhatItCreated runs cs_mkdir in a real shell with a
// restorecon that records its arguments: the topmost new directory is
// relabelled recursively, an existing one is left alone, and a host
// without restorecon still gets its directories.
func TestMkdirsRelabelsOnlyWhatItCreated(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	record := filepath.Join(root, "restorecon.args")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + record + "\n"
	if err := os.WriteFile(filepath.Join(bin, "restorecon"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(path, dir string) {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", Script("set -e\n"+mkdirs+`cs_mkdir "$1" 0750`, dir))
		cmd.Env = []string{"PATH=" + path}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cs_mkdir %s: %v: %s", dir, err, out)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("%s not created: %v", dir, err)
		}
	}
	withFake := bin + ":/usr/bin:/bin"

	run(withFake, filepath.Join(root, "etc", "new app", "conf.d"))
	run(withFake, filepath.Join(root, "etc")) // exists: nothing to relabel
	got, _ := os.ReadFile(record)
	want := "-R " + filepath.Join(root, "etc") + "\n"
	if string(got) != want {
		t.Errorf("restorecon calls:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(filepath.Join(root, "etc", "new app", "conf.d")); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750 on the directory itself", fi.Mode().Perm())
	}

	// no restorecon on PATH: the directories still come, without an error
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"sh", "mkdir", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(plain, tool)); err != nil {
			t.Fatal(err)
		}
	}
	run(plain, filepath.Join(root, "opt", "x"))
	if got2, _ := os.ReadFile(record); strings.Count(string(got2), "\n") != 1 {
		t.Errorf("restorecon ran without being on PATH: %s", got2)
	}
}
