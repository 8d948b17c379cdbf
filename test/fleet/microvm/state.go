package microvm

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Files of each guest's directory (build/microvm/FLEET/NODE), beside the
// fleet's own in build/microvm/FLEET: its state (backend.StateFile) and
// the ones every backend writes (key, known_hosts, inventory).
const (
	overlayFile    = "disk.qcow2"
	seedVolumeFile = "seed.img"
	consoleFile    = "console.log"
	qmpFile        = "qmp.sock"
	pidFile        = "qemu.pid"
)

// vmState is what Up records, written before any guest starts so Down after
// a crash knows what to stop. Down also finds qemu processes by their
// -name, so a fleet whose state was lost is still cleaned up.
type vmState struct {
	Name         string       `json:"name"`
	Backend      string       `json:"backend"`
	Octet        int          `json:"octet"`
	MemoryMiB    int          `json:"memoryMiB"`
	CPUs         int          `json:"cpus"`
	Accel        string       `json:"accel"`
	Image        string       `json:"image"` // the image's recipe hash
	SudoPassword string       `json:"sudoPassword"`
	Created      time.Time    `json:"created"`
	Hosts        []fleet.Host `json:"hosts"`
}

// fleetOf is the public view of a recorded fleet.
// guestHandshakeTimeout bounds an SSH handshake with a guest.
const guestHandshakeTimeout = 60 * time.Second

func fleetOf(dir string, st *vmState) *fleet.Fleet {
	f := fleet.NewFleet(dir, st.Name, st.Backend, st.Hosts, st.SudoPassword, PrivateInterface)
	f.Subnet = segmentPrefix + fmt.Sprintf(".%d.0/24", st.Octet)
	// CI's VM walk lost a guest mid-test when one handshake took over 10 s
	// beside three other lanes; a guest that is down still fails the dial.
	f.HandshakeTimeout = guestHandshakeTimeout
	return f
}

// guestPaths are one guest's files.
type guestPaths struct {
	dir, disk, seed, console, qmp, pid string
}

func pathsOf(fleetDir, host string) guestPaths {
	d := filepath.Join(fleetDir, host)
	return guestPaths{
		dir: d, disk: filepath.Join(d, overlayFile), seed: filepath.Join(d, seedVolumeFile),
		console: filepath.Join(d, consoleFile), qmp: filepath.Join(d, qmpFile), pid: filepath.Join(d, pidFile),
	}
}
