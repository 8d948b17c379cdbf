package microvm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverlayWritesLeaveTheImageAlone(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Fatalf("qemu-img: %v (hack/deps.sh installs qemu-utils)", err)
	}
	dir := t.TempDir()
	base, disk := filepath.Join(dir, "root.img"), filepath.Join(dir, "kc0.qcow2")
	if err := os.WriteFile(base, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := createOverlay(ctx, base, disk); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("qemu-img", "info", "--output=json", disk).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img info: %v\n%s", err, info)
	}
	for _, want := range []string{`"format": "qcow2"`, `"backing-filename": "` + base + `"`, `"backing-filename-format": "raw"`} {
		if !strings.Contains(string(info), want) {
			t.Errorf("overlay info lacks %s:\n%s", want, info)
		}
	}
	// write through the overlay as a guest would, then read the base
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 0 64k", disk).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io write: %v\n%s", err, out)
	}
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b[:64<<10] {
		if c != 0 {
			t.Fatal("a write to the overlay reached the shared image")
		}
	}
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "read -P 0x5a 0 64k", disk).CombinedOutput(); err != nil || strings.Contains(string(out), "Pattern verification failed") {
		t.Errorf("the overlay does not read back what was written: %v\n%s", err, out)
	}
	if err := createOverlay(ctx, filepath.Join(dir, "missing.img"), filepath.Join(dir, "x.qcow2")); err == nil {
		t.Error("an overlay over a missing image was created")
	}
}

func TestFreeLoopbackPort(t *testing.T) {
	p, err := freeLoopbackPort()
	if err != nil || p <= 0 || p > 65535 {
		t.Fatalf("freeLoopbackPort() = %d, %v", p, err)
	}
}
