package microvm

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strings"
)

// guestName is a guest's qemu -name: how Down finds a guest's process when
// its pid file is gone. It carries a tag of the state dir, so two
// checkouts' fleets of one name (two CI clones, say) never take each
// other's guests for their own.
func guestName(stateDir, fleetName, host string) string {
	return fmt.Sprintf("cargoship-%08x-%s-%s", fnv32(stateDir), fleetName, host)
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// startGuest makes guest i's overlay and seed volume and starts its qemu,
// which detaches once the guest runs.
func startGuest(ctx context.Context, stateDir string, st *vmState, i int, id identity, img Image, gp guestPaths) error {
	h := st.Hosts[i]
	if err := os.MkdirAll(gp.dir, 0o700); err != nil {
		return err
	}
	if err := createOverlay(ctx, img.Disk, gp.disk); err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	if err := writeSeedVolume(ctx, gp.seed, seedFiles(st.Name, id)); err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	g := guest{
		Name: guestName(stateDir, st.Name, h.Name), MemoryMiB: st.MemoryMiB, CPUs: st.CPUs, Accel: st.Accel,
		Kernel: img.Kernel, Initrd: img.Initrd, Cmdline: img.Cmdline + " " + slowMachineCmdline,
		Disk: gp.disk, Seed: gp.seed, SSHPort: h.SSHPort, MAC: guestMAC(st.Octet, i),
		Segment: segmentGroup(st.Octet), Console: gp.console, QMP: gp.qmp, PIDFile: gp.pid,
	}
	return launch(ctx, h.Name, g)
}

// slowMachineCmdline lets a unit take ten minutes to start rather than
// systemd's 90 seconds. Under TCG on a loaded machine (CI runs the VM walk
// beside every other suite) ssh.service ran out of its 90 seconds over and
// over, each try behind fapolicyd's permission checks, and the guest was
// never reachable. A guest that is merely slow must come up; one that is
// broken still fails the fleet's own deadline.
//
// journald also copies every warning and error to the serial console,
// which the fleet prints when a guest does not come up: the reason a unit
// failed is then in the test's output, not in a journal nobody can reach.
const slowMachineCmdline = "systemd.default_timeout_start_sec=600 systemd.journald.forward_to_console=1 systemd.journald.max_level_console=warning"

// guestNice is the niceness guests run at when this process may raise
// their priority (as root). A TCG guest's every instruction costs host
// CPU, and its services have deadlines a build or a test beside it does
// not: given an equal share on a busy machine, its boot took ten minutes.
const guestNice = "-5"

// launch runs qemu for g; it returns once qemu has detached.
func launch(ctx context.Context, host string, g guest) error {
	_ = os.Remove(g.PIDFile)
	argv := append([]string{"qemu-system-x86_64"}, g.args()...)
	if os.Geteuid() == 0 {
		argv = append([]string{"nice", "-n", guestNice}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: qemu-system-x86_64: %w: %s", host, err, strings.TrimSpace(string(out)))
	}
	return nil
}
