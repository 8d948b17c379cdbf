package microvm

import (
	"fmt"
	"strconv"
	"strings"
)

// PCI slots of the two NICs, fixed so the guest's predictable interface
// names are too: enp0s3 is management, enp0s4 the fleet's own segment (the
// name the inventory gives as privateInterface; docs/reference/microvm.md §2).
const (
	mgmtSlot         = 3
	fleetSlot        = 4
	PrivateInterface = "enp0s4"
)

// guest is what one qemu process is started with.
type guest struct {
	Name      string
	MemoryMiB int
	CPUs      int
	Accel     string // AccelKVM or AccelTCG

	// Direct kernel boot: the image's kernel and initrd, and its cmdline.
	Kernel, Initrd, Cmdline string
	Disk                    string // the guest's qcow2 overlay over the image
	Seed                    string // the vfat first-boot volume (label CIDATA)

	SSHPort int    // forwarded from 127.0.0.1 to the guest's port 22
	MAC     string // the fleet NIC's address
	Segment string // the fleet segment's multicast group and port

	Console string // the serial console, kept for a guest that never answers
	QMP     string // unix socket: power off, reset, stop and continue
	PIDFile string
}

// args is qemu-system-x86_64's command line for g. qemu detaches
// (-daemonize) once the guest is started, so Ctrl-C on a bring-up leaves
// the fleet running; it writes its pid for Down.
func (g guest) args() []string {
	a := []string{
		"-name", g.Name,
		"-machine", "q35",
		"-m", strconv.Itoa(g.MemoryMiB),
		"-smp", strconv.Itoa(g.CPUs),
	}
	if g.Accel == AccelKVM {
		a = append(a, "-accel", "kvm", "-cpu", "host")
	} else {
		a = append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
	}
	a = append(a,
		"-kernel", g.Kernel, "-initrd", g.Initrd, "-append", g.Cmdline,
		"-drive", driveArg(g.Disk, "qcow2", false),
		"-drive", driveArg(g.Seed, "raw", true),
		// management: slirp, so no root and no bridge on this machine; its
		// only way in is the SSH forward on the loopback
		"-netdev", fmt.Sprintf("user,id=mgmt,hostfwd=tcp:127.0.0.1:%d-:22", g.SSHPort),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=mgmt,addr=%#x", mgmtSlot),
		// the fleet's L2 segment: every guest of a fleet joins one multicast
		// group on the loopback, so guests see each other and nothing else
		"-netdev", fmt.Sprintf("socket,id=fleet,mcast=%s,localaddr=127.0.0.1", g.Segment),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=fleet,mac=%s,addr=%#x", g.MAC, fleetSlot),
		"-display", "none",
		"-serial", "file:"+g.Console,
		"-qmp", "unix:"+g.QMP+",server=on,wait=off",
		"-pidfile", g.PIDFile,
		"-daemonize",
	)
	return a
}

// driveArg is a virtio -drive. qemu splits its options on commas; a comma
// in a path is written twice.
func driveArg(path, format string, readOnly bool) string {
	s := "file=" + strings.ReplaceAll(path, ",", ",,") + ",if=virtio,format=" + format
	if readOnly {
		s += ",readonly=on"
	}
	return s
}

// Addressing of a fleet's segment, derived from an octet chosen per fleet
// (as the container backend chooses its /24): guests are 10.73.<octet>.11 upwards, the
// multicast group 239.73.<octet>.1 (organisation-local scope) on port
// 17300+octet, and each guest's MAC is 52:54:00 (qemu's prefix), 73, the
// octet and its index.
const (
	segmentPrefix = "10.73"
	firstGuest    = 11
	segmentPort   = 17300
)

func guestAddress(octet, i int) string {
	return fmt.Sprintf("%s.%d.%d", segmentPrefix, octet, firstGuest+i)
}

func segmentGroup(octet int) string {
	return fmt.Sprintf("239.73.%d.1:%d", octet, segmentPort+octet)
}

func guestMAC(octet, i int) string {
	return fmt.Sprintf("52:54:00:73:%02x:%02x", octet, i)
}
