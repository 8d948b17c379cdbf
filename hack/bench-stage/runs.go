package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	_ "github.com/colonel-byte/cargoship/test/fleet/container"
)

// measured is one tool's run on one fresh fleet.
type measured struct {
	cold, converged time.Duration
	// state is the fleet's end state, for checking both tools did the same.
	state map[string]hostState
}

// withFleet brings up a fresh fleet, runs fn on it and always takes it
// down, also when fn fails or the run is interrupted.
func withFleet(ctx context.Context, c config, name string, fn func(*fleet.Fleet) error) (err error) {
	p, err := fleet.NewBackend("container", fleet.Options{Logger: c.log})
	if err != nil {
		return err
	}
	// A fleet of ours left by a killed run would make Up refuse.
	if err := p.Down(ctx, name); err != nil {
		return fmt.Errorf("removing a leftover fleet %s: %w", name, err)
	}
	t := time.Now()
	f, upErr := p.Up(ctx, fleet.Spec{Name: name, Control: 1, Worker: c.hosts - 1})
	defer func() {
		// The run's context may be cancelled; the teardown must still run.
		if derr := p.Down(context.WithoutCancel(ctx), name); derr != nil {
			err = errors.Join(err, fmt.Errorf("taking fleet %s down: %w", name, derr))
		}
	}()
	if upErr != nil {
		return fmt.Errorf("fleet %s: %w", name, upErr)
	}
	say("fleet %s up: %d hosts in %s", name, len(f.Hosts), since(t))
	return fn(f)
}

func cargoshipRun(ctx context.Context, c config, pkg string, i int) (measured, error) {
	var m measured
	err := withFleet(ctx, c, fleetCargoship, func(f *fleet.Fleet) error {
		for _, pass := range []struct {
			name string
			d    *time.Duration
		}{{"cold", &m.cold}, {"converged", &m.converged}} {
			walk, load, rep, err := runCargoship(ctx, f, pkg, c.work, c.log)
			if err != nil {
				return fmt.Errorf("cargoship run %d, %s: %w", i, pass.name, err)
			}
			*pass.d = walk
			say("run %d cargoship %-9s %6.1fs  (changes: %d; loading the package, not counted: %.1fs; slowest: %s)",
				i, pass.name, walk.Seconds(), len(rep.Changes()), load.Seconds(), slowest(rep, 3))
		}
		return m.readState(ctx, c, f, "cargoship")
	})
	return m, err
}

func ansibleRun(ctx context.Context, c config, a *ansible, i int) (measured, error) {
	var m measured
	err := withFleet(ctx, c, fleetAnsible, func(f *fleet.Fleet) error {
		if err := a.writeInventory(f); err != nil {
			return err
		}
		for _, pass := range []struct {
			name string
			d    *time.Duration
		}{{"cold", &m.cold}, {"converged", &m.converged}} {
			d, changed, err := a.play(ctx, fmt.Sprintf("run%d-%s", i, pass.name))
			if err != nil {
				return fmt.Errorf("ansible run %d, %s: %w", i, pass.name, err)
			}
			*pass.d = d
			say("run %d ansible   %-9s %6.1fs  (tasks changed: %d)", i, pass.name, d.Seconds(), changed)
			if pass.name == "converged" && changed > 0 {
				return fmt.Errorf("ansible run %d: the converged run changed %d tasks: the playbook is not idempotent (see %s)", i, changed, a.dir)
			}
		}
		return m.readState(ctx, c, f, "ansible")
	})
	return m, err
}

// readState records the fleet's end state and writes it to the work
// directory.
func (m *measured) readState(ctx context.Context, c config, f *fleet.Fleet, tool string) error {
	var err error
	if m.state, err = readState(ctx, f); err != nil {
		return err
	}
	return dumpState(c.work, tool, m.state)
}
