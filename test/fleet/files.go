package fleet

import "os"

// Files every backend writes in a fleet's directory (see NewFleet and
// WriteFleetFiles).
const (
	keyFile          = "id_fleet"
	knownHostsFile   = "known_hosts"
	inventoryFile    = "inventory.yaml"
	sudoPasswordFile = "sudo-password"
)

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
