package container

import (
	"fmt"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Memory estimates per host. Measured PSS is ~15 MiB for a base host and
// 43-48 MiB once firewalld runs; the estimates leave room for what the test
// then installs, because an OOM kill halfway through a test run is far more
// confusing than a refusal up front.
const (
	memBaseMiB    = 64
	memExtraMiB   = 128 // firewalld/fapolicyd may be started on these
	memReserveMiB = 512 // left for this machine itself
	// containerd, kubelet and a few pods on a NodeRuntime host
	memNodeMiB = 512
)

func memPerHostMiB(image string) int {
	if image == ImageBase {
		return memBaseMiB
	}
	return memExtraMiB
}

// checkMemory refuses a fleet that will not fit in availMiB.
func checkMemory(spec fleet.Spec, hosts, availMiB int) error {
	per := memPerHostMiB(spec.Image)
	if spec.NodeRuntime {
		per += memNodeMiB
	}
	need := hosts*per + memReserveMiB
	if need > availMiB {
		return fmt.Errorf("fleet %q will not fit: %d host(s) at ~%d MiB each (image %q) plus %d MiB reserve need %d MiB, but MemAvailable is %d MiB; ask for fewer hosts or image %q",
			spec.Name, hosts, per, spec.Image, memReserveMiB, need, availMiB, ImageBase)
	}
	return nil
}
