package microvm

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// backendName is how test/fleet knows this backend.
const backendName = "microvm"

func init() {
	fleet.Register(backendName, func(o fleet.Options) (fleet.Provider, error) { return New(o) })
}

// settings are fleet.Options with this backend's defaults filled in.
type settings struct {
	stateDir, cacheDir string
	log                *slog.Logger
}

// defaults fills in o: the state dir is $CARGOSHIP_MICROVM_DIR, else
// build/microvm under the repository root (so a guest's console is at
// build/microvm/FLEET/NODE/console.log); the cache is DefaultCacheDir.
func defaults(o fleet.Options) (settings, error) {
	s := settings{stateDir: o.StateDir, cacheDir: o.CacheDir, log: o.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.stateDir == "" {
		s.stateDir = os.Getenv("CARGOSHIP_MICROVM_DIR")
	}
	if s.stateDir == "" {
		root, err := repo.Root()
		if errors.Is(err, repo.ErrNotFound) {
			root, err = os.Getwd()
		}
		if err != nil {
			return s, err
		}
		s.stateDir = filepath.Join(root, "build", "microvm")
	}
	if s.cacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return s, err
		}
		s.cacheDir = d
	}
	var err error
	if s.stateDir, err = filepath.Abs(s.stateDir); err != nil {
		return s, err
	}
	s.cacheDir, err = filepath.Abs(s.cacheDir)
	return s, err
}
