package e2eutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// KeepFleetEnv, when set, leaves a suite's fleet up after its tests.
const KeepFleetEnv = "CARGOSHIP_E2E_KEEP_FLEET"

// RequireRoot skips t where the container fleet cannot run.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the container fleet needs root (network namespaces, overlay mounts, systemd-nspawn): run as root, as CI does")
	}
}

// retryPause is how long a fleet that failed to come up rests, down,
// before its second try.
const retryPause = 30 * time.Second

// SuiteFleet is a suite's own container fleet on its way up: a suite starts
// it, builds its packages and binary while the hosts boot (the machine has
// few cores and most of a fleet's time is waiting), then waits for it.
type SuiteFleet struct {
	Provider *container.Container
	name     string
	up       chan error
	fleet    *fleet.Fleet
	// retried is the first bring-up's error when it was tried again.
	retried error
}

// StartSuiteFleet removes a stale fleet of the spec's name (a run killed
// before its teardown leaves one; it is never adopted), starts bringing
// the fleet up, and tears it down when t ends unless KeepFleetEnv is set.
func StartSuiteFleet(ctx context.Context, t testing.TB, spec fleet.Spec) *SuiteFleet {
	t.Helper()
	prov, err := container.NewContainer(fleet.Options{Logger: TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := prov.Down(ctx, spec.Name); err != nil {
		t.Fatalf("removing a stale %s fleet: %v", spec.Name, err)
	}
	sf := &SuiteFleet{Provider: prov, name: spec.Name, up: make(chan error, 1)}
	go func() {
		f, err := prov.Up(ctx, spec)
		if err != nil && ctx.Err() == nil {
			// Once more, from nothing: on this cgroup v1 kernel a host's
			// supervisor has failed its cgroup join with EIO five times
			// over, twice in CI, both times for e2ek8sha right after the
			// upstream walk's node fleet went down, and the same fleet
			// came up when started again, the last time a minute later.
			sf.retried = err
			if derr := prov.Down(ctx, spec.Name); derr == nil {
				select {
				case <-ctx.Done():
				case <-time.After(retryPause):
				}
				f, err = prov.Up(ctx, spec)
			}
		}
		sf.fleet = f
		sf.up <- err
	}()
	t.Cleanup(func() {
		if os.Getenv(KeepFleetEnv) != "" {
			t.Logf("%s set: the fleet stays up; remove it with `mage dev:fleetDown -fleet=%s`", KeepFleetEnv, spec.Name)
			return
		}
		if err := prov.Down(context.Background(), spec.Name); err != nil {
			t.Errorf("tearing down the fleet: %v", err)
		}
	})
	return sf
}

// Wait returns the fleet once it is up, failing t when it did not come up.
func (sf *SuiteFleet) Wait(t testing.TB) *fleet.Fleet {
	t.Helper()
	err := <-sf.up
	if sf.retried != nil {
		t.Logf("the %s fleet did not come up the first time, so it was brought up again: %v", sf.name, sf.retried)
	}
	if err != nil {
		t.Fatalf("bringing up the %s fleet: %v", sf.name, err)
	}
	sf.up <- nil // a second Wait returns at once
	return sf.fleet
}

// BuildCargoship builds the binary under test into dir, for suites that
// run the real command: its exit status and streams are its own.
func BuildCargoship(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cargoship")
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cargoship")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cargoship: %w\n%s", err, out)
	}
	return bin, nil
}
