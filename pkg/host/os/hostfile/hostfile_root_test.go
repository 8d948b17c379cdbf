package hostfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/os/ostest"
)

// TestInPlaceFallback bind-mounts a file, as containers do with
// /etc/hosts: renaming onto it fails (EBUSY) and only the in-place
// fallback can write it.
func TestInPlaceFallback_Root(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount")
	}
	ctx := context.Background()
	r := &ostest.Local{}
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
	if err := Write(ctx, r, dst, []byte("new\n"), 0o644); err == nil {
		t.Fatal("rename onto a bind mount should fail without the fallback")
	}
	if err := Write(ctx, r, dst, []byte("new\n"), 0o644, InPlaceFallback()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(src); string(b) != "new\n" {
		t.Errorf("bind-mounted file holds %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
