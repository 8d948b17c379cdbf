package microvm

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// The backend's lifecycle checks: what a fleet that is up is, a reboot, and
// what Down leaves. TestFleetLifecycle_Root makes them on a fleet of its
// own; the phase suite's VM bring-up makes them on its guests, so CI boots
// those two guests once for both (issue 32).

// CheckUpRefusesMemory asserts that a bring-up that does not fit in
// memory is refused naming -memory before anything starts: no directory,
// no qemu. name must not be up.
func CheckUpRefusesMemory(ctx context.Context, t testing.TB, p *Provider, name string) {
	t.Helper()
	_, err := p.Up(ctx, fleet.Spec{Name: name, Control: 1, MemoryMiB: 1 << 30})
	require.ErrorContains(t, err, "-memory")
	assert.NoDirExists(t, p.fleetDir(name))
	assert.Empty(t, p.running(name), "no qemu was started")
}

// CheckFleetUp asserts, from inside each guest of a fleet just brought up,
// its hostname, SELinux enforcing, fapolicyd active, its private address
// and sudo with the fleet's password; that the guests reach each other on
// the fleet segment; the inventory; that a second Up is refused; and that
// List reports every guest running. It changes nothing on the guests.
func CheckFleetUp(ctx context.Context, t testing.TB, p *Provider, f *fleet.Fleet) {
	t.Helper()
	require.GreaterOrEqual(t, len(f.Hosts), 2, "the segment check needs two guests")
	for _, h := range f.Hosts {
		assert.Equal(t, h.Name, rootRun(ctx, t, f, h.Name, "hostname"))
		assert.Equal(t, "Enforcing", rootRun(ctx, t, f, h.Name, "getenforce"), "%s: SELinux", h.Name)
		assert.Equal(t, "active", rootRun(ctx, t, f, h.Name, "systemctl is-active fapolicyd"), "%s: fapolicyd", h.Name)
		assert.Contains(t, rootRun(ctx, t, f, h.Name, "ip -4 -o addr show dev "+PrivateInterface), h.Address+"/24", "%s: its private address", h.Name)
		out, _, err := f.RunInput(ctx, h.Name, fleet.UserSudoPassword, f.SudoPassword+"\n", "sudo -S -p '' id -u")
		require.NoError(t, err, "%s: sudo with the fleet's password", h.Name)
		assert.Equal(t, "0", strings.TrimSpace(out))
	}
	// the fleet segment: the first guest reaches the second on its
	// private address
	rootRun(ctx, t, f, f.Hosts[0].Name, "ping -c1 -W5 -I "+PrivateInterface+" "+f.Hosts[1].Address)

	inv, err := os.ReadFile(f.InventoryPath)
	require.NoError(t, err)
	assert.Contains(t, string(inv), "privateInterface: "+PrivateInterface)
	assert.Contains(t, string(inv), "address: 127.0.0.1")

	_, err = p.Up(ctx, fleet.Spec{Name: f.Name, Control: 1})
	require.ErrorContains(t, err, "already up")

	list, err := p.List(ctx)
	require.NoError(t, err)
	var mine []fleet.Status
	for _, s := range list {
		if s.Name == f.Name {
			mine = append(mine, s)
		}
	}
	require.Len(t, mine, 1, "List reports fleet %s once", f.Name)
	require.Len(t, mine[0].Hosts, len(f.Hosts))
	for _, hs := range mine[0].Hosts {
		assert.Equal(t, "running", hs.State, hs.Name)
	}
}

// CheckReboot reboots one guest and asserts it is a new boot of the same
// disk: a file written before is there, the first-boot step did not run
// again, SELinux is still enforcing. The file is removed afterwards.
func CheckReboot(ctx context.Context, t testing.TB, p *Provider, f *fleet.Fleet, host string) {
	t.Helper()
	const kept = "/root/before-reboot"
	marker := rootRun(ctx, t, f, host, "stat -c %Y "+SeedDoneMarker)
	boot := rootRun(ctx, t, f, host, "cat /proc/sys/kernel/random/boot_id")
	rootRun(ctx, t, f, host, "echo kept > "+kept)
	require.NoError(t, p.Reboot(ctx, f.Name, []string{host}))
	assert.NotEqual(t, boot, rootRun(ctx, t, f, host, "cat /proc/sys/kernel/random/boot_id"))
	assert.Equal(t, "kept", rootRun(ctx, t, f, host, "cat "+kept))
	assert.Equal(t, marker, rootRun(ctx, t, f, host, "stat -c %Y "+SeedDoneMarker), "the first-boot step ran once")
	assert.Equal(t, "Enforcing", rootRun(ctx, t, f, host, "getenforce"))
	rootRun(ctx, t, f, host, "rm "+kept)
}

// CheckFleetDown takes a fleet down and asserts that no qemu process and
// nothing under the state dir is left, and that Down again is a no-op.
func CheckFleetDown(ctx context.Context, t testing.TB, p *Provider, name string) {
	t.Helper()
	if err := p.Down(ctx, name); err != nil {
		t.Errorf("tearing down fleet %s: %v", name, err)
		return
	}
	assert.Empty(t, qemuPIDs(p.s.stateDir, name), "no qemu process is left")
	assert.NoDirExists(t, p.fleetDir(name), "nothing is left under the state dir")
	assert.NoError(t, p.Down(ctx, name), "Down again is a no-op")
}

// rootRun runs cmd as root on host and returns its trimmed stdout; a
// failure fails the test.
func rootRun(ctx context.Context, t testing.TB, f *fleet.Fleet, host, cmd string) string {
	t.Helper()
	out, _, err := f.Run(ctx, host, fleet.UserRoot, cmd)
	require.NoError(t, err)
	return strings.TrimSpace(out)
}
