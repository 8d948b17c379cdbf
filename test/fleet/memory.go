package fleet

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// MemAvailableMiB reads MemAvailable from /proc/meminfo: what a backend
// checks a fleet against before it starts any host.
func MemAvailableMiB() (int, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: %q: %w", sc.Text(), err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}

// checkMemory refuses a fleet that will not fit in availMiB.
func checkMemory(spec Spec, hosts, availMiB int) error {
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
