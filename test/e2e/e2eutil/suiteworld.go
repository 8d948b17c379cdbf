package e2eutil

import (
	"context"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// SuiteNeeds is what a suite builds while its fleet's hosts boot.
type SuiteNeeds struct {
	// Binary builds the cargoship binary under test, for suites that run
	// the real command.
	Binary bool
	// Build makes the suite's own things (its packages); it runs on the
	// test's goroutine, so it may fail t.
	Build func()
}

// SuiteWorld is a suite's own container fleet once it is up, with what
// every such suite reads from it.
type SuiteWorld struct {
	Provider *container.Container
	Fleet    *fleet.Fleet
	// Hosts are the fleet's hosts as its inventory lists them.
	Hosts []v1alpha1.Host
	// In reads the hosts over connections of its own.
	In *Inspector
	// Bin is the cargoship binary when SuiteNeeds.Binary asked for it.
	Bin string
}

// SetUpSuite brings up a suite's own fleet (StartSuiteFleet: torn down
// when t ends) while the binary and the suite's packages build, all at
// once: the machine has few cores and most of a fleet's time is waiting.
// It skips t without root.
func SetUpSuite(t *testing.T, spec fleet.Spec, needs SuiteNeeds) *SuiteWorld {
	t.Helper()
	RequireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	sf := StartSuiteFleet(ctx, t, spec)
	binc := make(chan builtBinary, 1)
	if needs.Binary {
		dir := t.TempDir()
		go func() {
			bin, err := BuildCargoship(ctx, dir)
			binc <- builtBinary{bin, err}
		}()
	}
	if needs.Build != nil {
		needs.Build()
	}
	sw := &SuiteWorld{Provider: sf.Provider, Fleet: sf.Wait(t)}
	if needs.Binary {
		b := <-binc
		if b.err != nil {
			t.Fatal(b.err)
		}
		sw.Bin = b.bin
	}
	c, _, err := v1alpha1.LoadClusterFile(sw.Fleet.InventoryPath)
	if err != nil {
		t.Fatalf("the fleet's inventory does not load: %v", err)
	}
	sw.Hosts = c.Spec.Hosts
	sw.In = NewInspector(t, sw.Hosts, sw.Fleet.KnownHostsPath)
	return sw
}

// builtBinary is how the binary's build ended.
type builtBinary struct {
	bin string
	err error
}
