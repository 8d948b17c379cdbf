package microvm

import (
	"fmt"
	"os"
	"path/filepath"
)

// Accelerators qemu is started with.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg" // emulation: works everywhere, several times slower
)

// Accel is how the guests will run, and why, for the bring-up to say.
type Accel struct {
	Name   string // AccelKVM or AccelTCG
	Reason string
}

// kvmModules are the KVM implementations qemu's -accel kvm drives. Others
// can provide /dev/kvm too: kvm_pvm (pagetable-based virtualization, found
// on cloud VMs without nested virtualization) creates the device but runs
// only guests whose kernel is built for it, so its /dev/kvm does not count
// (docs/reference/microvm.md §1).
var kvmModules = []string{"kvm_intel", "kvm_amd"}

// detectAccel picks KVM when devKVM opens read-write and one of kvmModules
// is loaded (under sysModule, /sys/module), else TCG with the reason.
func detectAccel(devKVM, sysModule string) Accel {
	f, err := os.OpenFile(devKVM, os.O_RDWR, 0)
	if err != nil {
		return Accel{AccelTCG, fmt.Sprintf("%s cannot be opened read-write (%v): guests are emulated", devKVM, err)}
	}
	_ = f.Close()
	for _, m := range kvmModules {
		if _, err := os.Stat(filepath.Join(sysModule, m)); err == nil {
			return Accel{AccelKVM, fmt.Sprintf("%s is usable (%s)", devKVM, m)}
		}
	}
	return Accel{AccelTCG, fmt.Sprintf("%s exists but neither %s nor %s is loaded (another KVM implementation, such as kvm_pvm, provides it, and a stock guest kernel cannot run on that): guests are emulated", devKVM, kvmModules[0], kvmModules[1])}
}

// DetectAccel is detectAccel on this machine.
func DetectAccel() Accel { return detectAccel("/dev/kvm", "/sys/module") }
