package microvm

import "fmt"

// Guest sizes, in MiB and vCPUs.
const (
	// DefaultMemoryMiB fits a controller running an engine with room for
	// its pods.
	DefaultMemoryMiB = 4096
	DefaultCPUs      = 2
	// qemu's own overhead per guest, beyond the guest's memory.
	qemuOverheadMiB = 128
	// left for this machine itself
	reserveMiB = 512
)

// checkFit refuses guests that will not fit in availMiB, naming -memory,
// rather than leave a bring-up to the OOM killer halfway through.
func checkFit(fleet string, guests, memoryMiB, availMiB int) error {
	need := guests*(memoryMiB+qemuOverheadMiB) + reserveMiB
	if need <= availMiB {
		return nil
	}
	return fmt.Errorf("fleet %q will not fit: %d guest(s) at -memory=%d MiB (+%d MiB qemu each) plus %d MiB reserve need %d MiB, but MemAvailable is %d MiB; pass a smaller -memory or ask for fewer guests",
		fleet, guests, memoryMiB, qemuOverheadMiB, reserveMiB, need, availMiB)
}
