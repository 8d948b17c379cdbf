package microvm

import (
	"slices"
	"strings"
	"testing"
)

// after returns the argument that follows flag's n-th occurrence.
func after(t *testing.T, args []string, flag string, n int) string {
	t.Helper()
	seen := 0
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			if seen == n {
				return args[i+1]
			}
			seen++
		}
	}
	t.Fatalf("%s #%d not in %q", flag, n, args)
	return ""
}

func testGuest() guest {
	return guest{
		Name: "kc0", MemoryMiB: 3072, CPUs: 2, Accel: AccelTCG,
		Kernel: "/c/vmlinuz", Initrd: "/c/initrd.img", Cmdline: "root=/dev/vda ro console=ttyS0 security=selinux",
		Disk: "/b/microvm/dev/kc0/disk.qcow2", Seed: "/b/a,dir/kc0/seed.img",
		SSHPort: 2201, MAC: guestMAC(9, 0), Segment: segmentGroup(9),
		Console: "/b/microvm/dev/kc0/console.log", QMP: "/b/microvm/dev/kc0/qmp.sock", PIDFile: "/b/microvm/dev/kc0/pid",
	}
}

func TestQemuArgs(t *testing.T) {
	a := testGuest().args()
	if got := after(t, a, "-m", 0); got != "3072" {
		t.Errorf("-m %s", got)
	}
	if got := after(t, a, "-accel", 0); got != "tcg,thread=multi" {
		t.Errorf("-accel %s for TCG", got)
	}
	if got := after(t, a, "-append", 0); got != testGuest().Cmdline {
		t.Errorf("-append %q: the cmdline is one argument, passed as it is", got)
	}
	if got := after(t, a, "-drive", 1); got != "file=/b/a,,dir/kc0/seed.img,if=virtio,format=raw,readonly=on" {
		t.Errorf("seed drive %q: a comma in the path must be doubled and the seed read-only", got)
	}
	if got := after(t, a, "-netdev", 0); got != "user,id=mgmt,hostfwd=tcp:127.0.0.1:2201-:22" {
		t.Errorf("management netdev %q: SSH forwarded from the loopback only", got)
	}
	if got := after(t, a, "-netdev", 1); got != "socket,id=fleet,mcast=239.73.9.1:17309,localaddr=127.0.0.1" {
		t.Errorf("fleet netdev %q", got)
	}
	if got := after(t, a, "-device", 1); got != "virtio-net-pci,netdev=fleet,mac=52:54:00:73:09:00,addr=0x4" {
		t.Errorf("fleet NIC %q: slot 4 is what makes it enp0s4", got)
	}
	if !slices.Contains(a, "-daemonize") || after(t, a, "-pidfile", 0) != "/b/microvm/dev/kc0/pid" {
		t.Error("qemu must detach and write its pid, so Ctrl-C leaves the fleet up and Down finds it")
	}
	if got := after(t, a, "-serial", 0); !strings.HasPrefix(got, "file:") {
		t.Errorf("-serial %s: the console must be kept in a file", got)
	}
	k := testGuest()
	k.Accel = AccelKVM
	ka := k.args()
	if after(t, ka, "-accel", 0) != "kvm" || after(t, ka, "-cpu", 0) != "host" {
		t.Errorf("KVM guest: %q", ka)
	}
}

func TestSegmentAddressing(t *testing.T) {
	if got := guestAddress(9, 0); got != "10.73.9.11" {
		t.Errorf("guestAddress(9, 0) = %s", got)
	}
	if guestMAC(9, 0) == guestMAC(9, 1) || guestMAC(9, 0) == guestMAC(10, 0) {
		t.Error("MACs repeat across guests or fleets")
	}
	if segmentGroup(9) == segmentGroup(10) {
		t.Error("two fleets share a segment")
	}
}

// Two state dirs' fleets of one name have guests of different names, so
// neither's Down finds the other's qemu.
func TestGuestNamesPerStateDir(t *testing.T) {
	a, b := guestName("/ci/a/build/microvm", "e2e", "kc0"), guestName("/ci/b/build/microvm", "e2e", "kc0")
	if a == b {
		t.Errorf("one name for two state dirs: %s", a)
	}
	if !strings.HasPrefix(a, "cargoship-") || !strings.HasSuffix(a, "-e2e-kc0") {
		t.Errorf("guest name %q", a)
	}
	if strings.HasPrefix(guestName("/x", "e2estage", "kc0"), guestName("/x", "e2e", "")) {
		t.Error("fleet e2e's prefix matches fleet e2estage's guests")
	}
}
