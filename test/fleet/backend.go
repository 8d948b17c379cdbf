package fleet

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/internal/repo"
)

// Options configure a backend. The zero value uses the defaults.
type Options struct {
	// StateDir holds one directory per fleet. Default: $CARGOSHIP_FLEET_DIR,
	// else build/fleet under the repository root (found from the working
	// directory), else build/fleet under the working directory.
	StateDir string
	// CacheDir holds the rootfs layers, the .deb cache and the cached host
	// keys. Default: $CARGOSHIP_FLEET_CACHE, else
	// $XDG_CACHE_HOME/cargoship/fleet (~/.cache/cargoship/fleet).
	CacheDir string
	// Logger receives progress lines ("ready: kc0 2.6s"). Default: slog.Default().
	Logger *slog.Logger
}

// ErrNotLinked is returned for a backend that lives in a package of its
// own which the program did not import: importing it registers it.
var ErrNotLinked = errors.New("backend not linked in")

// Factory makes a backend from options.
type Factory func(Options) (Provider, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Factory{}
)

// Register adds a backend under name. It is the seam for backends that live
// in other files or packages (the "inventory" backend, which drives a user's
// own hosts, is expected to register itself here).
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[name] = f
}

func init() {
	// test/fleet/container and test/fleet/microvm register the real ones
	// from their init, which runs after this one
	Register("container", func(Options) (Provider, error) {
		return nil, fmt.Errorf("fleet backend %q: %w: import github.com/colonel-byte/cargoship/test/fleet/container", "container", ErrNotLinked)
	})
	Register("microvm", func(Options) (Provider, error) {
		return nil, fmt.Errorf("fleet backend %q: %w: import github.com/colonel-byte/cargoship/test/fleet/microvm", "microvm", ErrNotLinked)
	})
}

// DefaultBackend is used when Backend is given an empty name and
// CARGOSHIP_FLEET_BACKEND is unset.
const DefaultBackend = "container"

// Backend returns the named backend with default options.
func Backend(name string) (Provider, error) { return NewBackend(name, Options{}) }

// NewBackend returns the named backend ("" means $CARGOSHIP_FLEET_BACKEND,
// else DefaultBackend).
func NewBackend(name string, opts Options) (Provider, error) {
	if name == "" {
		name = os.Getenv("CARGOSHIP_FLEET_BACKEND")
	}
	if name == "" {
		name = DefaultBackend
	}
	registryMu.Lock()
	f, ok := registry[name]
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	registryMu.Unlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("unknown fleet backend %q (known: %s)", name, strings.Join(names, ", "))
	}
	return f(opts)
}

// WithDefaults fills in the zero fields of o as documented on Options.
func (o Options) WithDefaults() (Options, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StateDir == "" {
		o.StateDir = os.Getenv("CARGOSHIP_FLEET_DIR")
	}
	if o.StateDir == "" {
		// go test ./test/fleet (run in test/fleet) and mage (run at the
		// root) agree on where build/fleet is
		root, err := repo.Root()
		if errors.Is(err, repo.ErrNotFound) {
			root, err = os.Getwd()
		}
		if err != nil {
			return o, err
		}
		o.StateDir = filepath.Join(root, "build", "fleet")
	}
	if o.CacheDir == "" {
		o.CacheDir = os.Getenv("CARGOSHIP_FLEET_CACHE")
	}
	if o.CacheDir == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return o, fmt.Errorf("no cache dir (set CARGOSHIP_FLEET_CACHE): %w", err)
		}
		o.CacheDir = filepath.Join(uc, "cargoship", "fleet")
	}
	var err error
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return o, err
	}
	if o.CacheDir, err = filepath.Abs(o.CacheDir); err != nil {
		return o, err
	}
	return o, nil
}
