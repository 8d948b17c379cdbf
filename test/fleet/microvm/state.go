package microvm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Files of a fleet's directory (build/microvm/FLEET) beside the ones every
// backend writes (key, known_hosts, inventory), and of each guest's
// directory (build/microvm/FLEET/NODE).
const (
	stateFile      = "state.json"
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

func writeState(dir string, st *vmState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	// 0600: it holds the sudo password
	return fleet.WriteFileAtomic(filepath.Join(dir, stateFile), append(b, '\n'), 0o600)
}

func readState(dir string) (*vmState, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var st vmState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return &st, nil
}

// fleetOf is the public view of a recorded fleet.
func fleetOf(dir string, st *vmState) *fleet.Fleet {
	f := fleet.NewFleet(dir, st.Name, st.Backend, st.Hosts, st.SudoPassword, PrivateInterface)
	f.Subnet = segmentPrefix + fmt.Sprintf(".%d.0/24", st.Octet)
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
