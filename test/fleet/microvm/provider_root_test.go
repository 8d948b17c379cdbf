package microvm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestFleetLifecycle_Root brings up two guests from the built-in image (the
// build needs root: debootstrap), checks what they are from inside and that
// they reach each other on the fleet segment, refuses a second bring-up,
// reboots one, and takes the fleet down leaving nothing.
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

	// refused before anything starts: no directory, no qemu
	_, err = p.Up(ctx, fleet.Spec{Name: name, Control: 1, MemoryMiB: 1 << 30})
	require.ErrorContains(t, err, "-memory")
	assert.NoDirExists(t, filepath.Join(state, name))

	f, err := p.Up(ctx, fleet.Spec{Name: name, Control: 1, Worker: 1, MemoryMiB: 1536})
	require.NoError(t, err)
	require.Len(t, f.Hosts, 2)

	run := func(host, cmd string) string {
		t.Helper()
		out, _, err := f.Run(ctx, host, fleet.UserRoot, cmd)
		require.NoError(t, err)
		return strings.TrimSpace(out)
	}
	for _, h := range f.Hosts {
		assert.Equal(t, h.Name, run(h.Name, "hostname"))
		assert.Equal(t, "Enforcing", run(h.Name, "getenforce"), "%s: SELinux", h.Name)
		assert.Equal(t, "active", run(h.Name, "systemctl is-active fapolicyd"), "%s: fapolicyd", h.Name)
		assert.Contains(t, run(h.Name, "ip -4 -o addr show dev "+PrivateInterface), h.Address+"/24", "%s: its private address", h.Name)
		out, _, err := f.RunInput(ctx, h.Name, fleet.UserSudoPassword, f.SudoPassword+"\n", "sudo -S -p '' id -u")
		require.NoError(t, err, "%s: sudo with the fleet's password", h.Name)
		assert.Equal(t, "0", strings.TrimSpace(out))
	}
	// the fleet segment: kc0 reaches kw0 on its private address
	run("kc0", "ping -c1 -W5 -I "+PrivateInterface+" "+f.Hosts[1].Address)

	inv, err := os.ReadFile(f.InventoryPath)
	require.NoError(t, err)
	assert.Contains(t, string(inv), "privateInterface: "+PrivateInterface)
	assert.Contains(t, string(inv), "address: 127.0.0.1")

	_, err = p.Up(ctx, fleet.Spec{Name: name, Control: 1})
	require.ErrorContains(t, err, "already up")

	list, err := p.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	for _, hs := range list[0].Hosts {
		assert.Equal(t, "running", hs.State, hs.Name)
	}

	// a reboot is a new boot of the same disk; the first-boot step does
	// not run again
	marker := run("kw0", "stat -c %Y "+SeedDoneMarker)
	boot := run("kw0", "cat /proc/sys/kernel/random/boot_id")
	run("kw0", "echo kept > /root/before-reboot")
	require.NoError(t, p.Reboot(ctx, name, []string{"kw0"}))
	assert.NotEqual(t, boot, run("kw0", "cat /proc/sys/kernel/random/boot_id"))
	assert.Equal(t, "kept", run("kw0", "cat /root/before-reboot"))
	assert.Equal(t, marker, run("kw0", "stat -c %Y "+SeedDoneMarker), "the first-boot step ran once")
	assert.Equal(t, "Enforcing", run("kw0", "getenforce"))

	require.NoError(t, p.Down(ctx, name))
	assert.Empty(t, qemuPIDs(state, name), "no qemu process is left")
	assert.NoDirExists(t, filepath.Join(state, name), "nothing is left under the state dir")
	require.NoError(t, p.Down(ctx, name), "Down again is a no-op")
}

// lifecycleLog sends the progress lines to the test log.
type lifecycleLog struct{ t *testing.T }

func (w lifecycleLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
