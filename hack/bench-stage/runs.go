package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/fleet"
	_ "github.com/colonel-byte/cargoship/test/fleet/container"
)

// cargoshipMeasured is cargoship's run on one fresh fleet: the cold walk,
// the raw transfer right after it on the same hosts, the converged walk.
type cargoshipMeasured struct {
	cold, converged walkResult
	// direct is a cold walk with fan-out off, on a fleet of its own.
	direct walkResult
	raw    time.Duration
	// state is the fleet's end state, for checking both tools did the same.
	state map[string]hostState
}

// ansibleMeasured is Ansible's run on one fresh fleet.
type ansibleMeasured struct {
	cold, converged time.Duration
	state           map[string]hostState
}

// withFleet brings up a fresh fleet of hosts hosts, runs fn on it and
// always takes it down, also when fn fails or the run is interrupted.
func withFleet(ctx context.Context, c config, name string, hosts int, fn func(*fleet.Fleet) error) (err error) {
	p, err := fleet.NewBackend("container", fleet.Options{Logger: c.log})
	if err != nil {
		return err
	}
	// A fleet of ours left by a killed run would make Up refuse.
	if err := p.Down(ctx, name); err != nil {
		return fmt.Errorf("removing a leftover fleet %s: %w", name, err)
	}
	t := time.Now()
	f, upErr := p.Up(ctx, fleet.Spec{Name: name, Control: 1, Worker: hosts - 1})
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
	if err := shapeLink(ctx, f, c.linkMbit); err != nil {
		return err
	}
	return fn(f)
}

func cargoshipRun(ctx context.Context, c config, pkg string, pl payloads, hosts, i int) (cargoshipMeasured, error) {
	var m cargoshipMeasured
	err := withFleet(ctx, c, fleetCargoship, hosts, func(f *fleet.Fleet) error {
		tag := fmt.Sprintf("%dh-run%d", hosts, i)
		var err error
		if m.cold, err = walk(ctx, c, f, pkg, tag, "cold", false); err != nil {
			return err
		}
		if m.raw, err = rawTransfer(ctx, f, pl); err != nil {
			return fmt.Errorf("%s, raw transfer: %w", tag, err)
		}
		say("%s raw transfer     %6.1fs  (%s to each of %d hosts in parallel, system ssh)", tag, m.raw.Seconds(), node.HumanBytes(pl.perHost()), hosts)
		if m.converged, err = walk(ctx, c, f, pkg, tag, "converged", false); err != nil {
			return err
		}
		m.state, err = readState(ctx, f)
		if err != nil {
			return err
		}
		return dumpState(c.work, fmt.Sprintf("cargoship-%dh", hosts), m.state)
	})
	if err != nil {
		return m, err
	}
	// fan-out off: every file from here, on fresh hosts again
	err = withFleet(ctx, c, fleetDirect, hosts, func(f *fleet.Fleet) error {
		var err error
		m.direct, err = walk(ctx, c, f, pkg, fmt.Sprintf("%dh-run%d", hosts, i), "direct", true)
		return err
	})
	return m, err
}

// walk runs and reports one cargoship walk in a child process.
func walk(ctx context.Context, c config, f *fleet.Fleet, pkg, tag, pass string, noFanout bool) (walkResult, error) {
	r, err := walkChild(ctx, c, f, pkg, tag+"-"+pass, noFanout)
	if err != nil {
		return r, fmt.Errorf("cargoship %s, %s: %w", tag, pass, err)
	}
	say("%s cargoship %-9s %6.1fs  (changes: %d; sent %s; relayed %d; peak RSS %s; loading the package, not counted: %.1fs; slowest: %s)",
		tag, pass, r.Walk.Seconds(), r.Changes, node.HumanBytes(r.BytesSent), r.Relayed, node.HumanBytes(r.MaxRSS), r.Load.Seconds(), slowest(r.Timings, 3))
	return r, nil
}

func ansibleRun(ctx context.Context, c config, a *ansible, hosts, i int) (ansibleMeasured, error) {
	var m ansibleMeasured
	err := withFleet(ctx, c, fleetAnsible, hosts, func(f *fleet.Fleet) error {
		if err := a.writeInventory(f); err != nil {
			return err
		}
		tag := fmt.Sprintf("%dh-run%d", hosts, i)
		for _, pass := range []struct {
			name string
			d    *time.Duration
		}{{"cold", &m.cold}, {"converged", &m.converged}} {
			d, changed, err := a.play(ctx, tag+"-"+pass.name)
			if err != nil {
				return fmt.Errorf("ansible %s, %s: %w", tag, pass.name, err)
			}
			*pass.d = d
			say("%s ansible   %-9s %6.1fs  (tasks changed: %d)", tag, pass.name, d.Seconds(), changed)
			if pass.name == "converged" && changed > 0 {
				return fmt.Errorf("ansible %s: the converged run changed %d tasks: the playbook is not idempotent (see %s)", tag, changed, a.dir)
			}
		}
		var err error
		if m.state, err = readState(ctx, f); err != nil {
			return err
		}
		return dumpState(c.work, fmt.Sprintf("ansible-%dh", hosts), m.state)
	})
	return m, err
}

// runsAnsible says whether Ansible runs at any of the counts.
func (c config) runsAnsible() bool {
	if c.only == "cargoship" {
		return false
	}
	for _, n := range c.hosts {
		if slices.Contains(c.ansibleHosts, n) {
			return true
		}
	}
	return false
}

// measureCount runs every run of both tools at one fleet size, and
// compares their end states when both ran.
func measureCount(ctx context.Context, c config, pkg string, pl payloads, a *ansible, hosts int) (countResults, error) {
	cr := countResults{hosts: hosts, payload: pl.perHost()}
	withAnsible := c.only != "cargoship" && slices.Contains(c.ansibleHosts, hosts)
	for i := 1; i <= c.runs; i++ {
		if c.only != "ansible" {
			m, err := cargoshipRun(ctx, c, pkg, pl, hosts, i)
			if err != nil {
				return cr, err
			}
			cr.cargoship = append(cr.cargoship, m)
		}
		if withAnsible {
			m, err := ansibleRun(ctx, c, a, hosts, i)
			if err != nil {
				return cr, err
			}
			cr.ansible = append(cr.ansible, m)
		}
	}
	if len(cr.cargoship) > 0 && len(cr.ansible) > 0 {
		if diffs := compareStates(cr.cargoship[0].state, cr.ansible[0].state); len(diffs) > 0 {
			say("%d hosts: end states differ (%d):\n  %s", hosts, len(diffs), strings.Join(diffs, "\n  "))
		} else {
			say("%d hosts: end states match on every host (files, modes, rendered config, /etc/hosts block, sysctls, nft table)", hosts)
		}
	}
	return cr, nil
}
