package microvm

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestFleetLifecycle_Root brings up two guests from the built-in image (the
// build needs root: debootstrap), checks what they are from inside and that
// they reach each other on the fleet segment, refuses a second bring-up,
// reboots one, and takes the fleet down leaving nothing. CI makes these
// checks on the phase suite's guests instead (test/e2e/cluster, the
// microvm backend), so as not to boot two guests more; this test makes
// them alone.
func TestFleetLifecycle_Root(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("building the guest image needs root (debootstrap, chroot): run as root, as CI does")
	}
	if err := CheckTools(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	state := t.TempDir()
	p, err := New(fleet.Options{StateDir: state, Logger: slog.New(fleet.LineHandler(lifecycleLog{t}))})
	require.NoError(t, err)
	const name = "vmtest"
	require.NoError(t, p.Down(ctx, name), "a stale fleet of a killed run")
	t.Cleanup(func() { _ = p.Down(context.Background(), name) })

	CheckUpRefusesMemory(ctx, t, p, name)
	f, err := p.Up(ctx, fleet.Spec{Name: name, Control: 1, Worker: 1, MemoryMiB: 1536})
	require.NoError(t, err)
	require.Len(t, f.Hosts, 2)
	CheckFleetUp(ctx, t, p, f)
	CheckReboot(ctx, t, p, f, "kw0")
	CheckFleetDown(ctx, t, p, name)
}

// lifecycleLog sends the progress lines to the test log.
type lifecycleLog struct{ t *testing.T }

func (w lifecycleLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
