package host

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWriteHelpersPut runs cs_put in a real shell: the bytes and mode
// arrive under a path that needed new directories, and no temporary file
// is left beside it; a directory in the way fails without leaving one.
func TestWriteHelpersPut(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "new dir", "it's $HOME.conf")
	content := "line 1\n'quoted' \"and\" $(not run)\n"
	run := func(path string) ([]byte, error) {
		return exec.Command("/bin/sh", "-c", Script("set -e\n"+WriteHelpers+`cs_put "$1" 0640 "$2"`, path, base64.StdEncoding.EncodeToString([]byte(content)))).CombinedOutput()
	}
	if out, err := run(dst); err != nil {
		t.Fatalf("cs_put: %v: %s", err, out)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != content {
		t.Fatalf("content = %q, %v", got, err)
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", st.Mode())
	}
	if es, _ := os.ReadDir(filepath.Dir(dst)); len(es) != 1 {
		t.Errorf("left beside it: %v", es)
	}

	blocked := filepath.Join(dir, "blocked")
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(blocked, "x.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := run(filepath.Join(blocked, "x.conf")); err == nil {
		t.Error("writing onto a directory succeeded")
	}
	if es, _ := os.ReadDir(blocked); len(es) != 1 {
		t.Errorf("a failed put left %v", es)
	}
}
