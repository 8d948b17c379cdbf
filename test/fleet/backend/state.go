package backend

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// StateFile is where a backend records a fleet in the fleet's directory,
// beside the files every backend writes (fleet.NewFleet).
const StateFile = "state.json"

// WriteState records st, a backend's own state type, in dir's StateFile.
func WriteState(dir string, st any) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	// 0600: it holds the sudo password.
	return fleet.WriteFileAtomic(filepath.Join(dir, StateFile), append(b, '\n'), 0o600)
}

// ReadState reads what WriteState recorded in dir. An error wraps
// os.ErrNotExist when the fleet has no state file.
func ReadState[T any](dir string) (*T, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	var st T
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return &st, nil
}
