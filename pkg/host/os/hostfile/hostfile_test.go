package hostfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/os/ostest"
)

func TestWriteReadRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := &ostest.Local{}
	dir := t.TempDir()
	p := filepath.Join(dir, "sub dir", "it's $file")
	if _, ok, err := Read(ctx, r, p); err != nil || ok {
		t.Fatalf("missing file: exists=%v err=%v", ok, err)
	}
	data := []byte("line1\n\tno trailing newline \x00 binary\n\n")
	if err := Write(ctx, r, p, data, 0o640); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Read(ctx, r, p)
	if err != nil || !ok || string(got) != string(data) {
		t.Fatalf("Read = %q %v %v, want %q", got, ok, err, data)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	empty := filepath.Join(dir, "empty")
	if err := Write(ctx, r, empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := Read(ctx, r, empty); err != nil || !ok || len(got) != 0 {
		t.Errorf("empty file: %q %v %v", got, ok, err)
	}
	if err := Remove(ctx, r, p); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := Read(ctx, r, p); ok {
		t.Error("file still there after Remove")
	}
}

func TestSyncWritesOnlyOnDifference(t *testing.T) {
	ctx := context.Background()
	r := &ostest.Local{}
	p := filepath.Join(t.TempDir(), "f")
	for i, want := range []bool{true, false} {
		changed, err := Sync(ctx, r, p, []byte("x\n"), 0o644)
		if err != nil || changed != want {
			t.Errorf("run %d: changed=%v err=%v, want %v", i+1, changed, err, want)
		}
	}
	if changed, err := Sync(ctx, r, p, []byte("y\n"), 0o644); err != nil || !changed {
		t.Errorf("new content: changed=%v err=%v", changed, err)
	}
}

// TestRenameFailure uses a directory as the target: rename onto it fails,
// and without the in-place fallback that must be an error.
func TestRenameFailure(t *testing.T) {
	ctx := context.Background()
	r := &ostest.Local{}
	p := filepath.Join(t.TempDir(), "d")
	if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, r, p, []byte("x"), 0o644); err == nil {
		t.Error("renaming onto a non-empty directory should fail")
	}
	if _, _, err := Read(ctx, r, p); err == nil {
		t.Error("reading a directory should fail")
	}
}
