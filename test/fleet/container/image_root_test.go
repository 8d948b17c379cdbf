package container

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// requireRoot skips a test that needs root when not root. CI runs as root,
// so there these tests always run; the message says what is missing.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts overlays, creates network namespaces and runs systemd-nspawn (run `sudo go test ./test/fleet/...`)")
	}
}

// TestImage_Root builds the rootfs layers when missing or stale (4-7 min the
// first time) and checks that both verify and that a second call reuses them.
func TestImage_Root(t *testing.T) {
	requireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	im, err := EnsureImage(ctx, fleet.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyLayer(im.Base, baseChecks); err != nil {
		t.Fatal(err)
	}
	if err := verifyLayer(im.Extra, extraChecks); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	im2, err := EnsureImage(ctx, fleet.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if im2 != im {
		t.Fatalf("second EnsureImage returned %+v, first %+v", im2, im)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("reusing a built image took %s; it should only verify", d)
	}
}
