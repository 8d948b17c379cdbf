package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Down removes a fleet. See fleet.Provider.
func (c *Container) Down(ctx context.Context, name string) error {
	if err := fleet.ValidateName(name); err != nil {
		return err
	}
	lock, err := c.lockFleet(ctx, name)
	if err != nil {
		return err
	}
	defer lock.Release()
	dir := c.fleetDir(name)
	found := c.leftovers(ctx, name)
	if len(found) == 0 {
		c.opts.Logger.Info(fmt.Sprintf("fleet %s is not up; nothing to remove", name))
		return removeTree(dir)
	}
	start := time.Now()
	if err := c.down(ctx, name, dir); err != nil {
		return fmt.Errorf("fleet %q down: %w", name, err)
	}
	c.opts.Logger.Info(fmt.Sprintf("fleet %s down in %s", name, fleet.Since(start)))
	return nil
}

// down stops and removes everything of a fleet. It works from names, not
// from the state file, so it also cleans up after a run that crashed before
// (or while) writing it.
func (c *Container) down(ctx context.Context, name, dir string) error {
	var errs []error
	c.stopHosts(name)
	if err := unmountUnder(dir); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroups(name); err != nil {
		errs = append(errs, err)
	}
	if err := c.removeNetwork(ctx, name); err != nil {
		errs = append(errs, err)
	}
	cleanNspawnRuntime(netnsPrefix(name))
	if err := removeTree(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// stopHosts asks every host to power off (SIGTERM to systemd-nspawn makes it
// shut the container down cleanly), and kills what is left after stopGrace.
func (c *Container) stopHosts(name string) {
	procs := fleetProcs(name)
	var all []int
	for _, p := range procs {
		all = append(all, p.PID)
		if p.Comm == "systemd-nspawn" {
			_ = syscall.Kill(p.PID, syscall.SIGTERM)
		}
	}
	if len(procs) > 0 {
		c.opts.Logger.Info(fmt.Sprintf("stopping fleet %s: %d process(es)", name, len(procs)))
	}
	if backend.WaitGone(all, stopGrace) {
		// A crashed run can leave a host's processes without their
		// nspawn; they are found by their cgroup and their network
		// namespace.
		killCgroups(name)
		killAll(procsInNetns(listNetns(netnsPrefix(name))))
		return
	}
	c.opts.Logger.Warn(fmt.Sprintf("fleet %s: hosts did not power off in %s; killing them", name, stopGrace))
	// The loops first, or they would start a fresh nspawn; then the hosts'
	// own processes; then nspawn.
	for _, p := range procs {
		if p.Comm != "systemd-nspawn" {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	killCgroups(name)
	killAll(procsInNetns(listNetns(netnsPrefix(name))))
	for _, p := range fleetProcs(name) {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	backend.WaitGone(all, 5*time.Second)
}

func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	backend.WaitGone(pids, 5*time.Second)
}

// removeNetwork deletes the fleet's namespaces, veths and bridge. Deleting a
// namespace takes its eth0 and so the veth pair with it; the link sweep
// catches pairs whose namespace was already gone.
func (c *Container) removeNetwork(ctx context.Context, name string) error {
	nl, err := fleet.AcquireLock(ctx, netLockPath, "fleet network", c.opts.Logger)
	if err != nil {
		return err
	}
	defer nl.Release()
	var errs []error
	for _, ns := range listNetns(netnsPrefix(name)) {
		if err := deleteNetns(ctx, ns); err != nil {
			errs = append(errs, err)
		}
	}
	links, err := listLinks(ctx, vethPrefix(name))
	if err != nil {
		errs = append(errs, err)
	}
	for _, l := range append(links, bridgeName(name)) {
		if err := deleteLink(ctx, l); err != nil {
			errs = append(errs, err)
		}
	}
	tidyNetnsDir()
	return errors.Join(errs...)
}

// cleanNspawnRuntime removes what nspawn leaves in /run for the fleet's
// machines, and its lock files once no nspawn runs at all (a killed nspawn
// leaves them behind).
func cleanNspawnRuntime(machinePrefix string) {
	const rt = "/run/systemd/nspawn"
	if ms, _ := filepath.Glob(filepath.Join(rt, "propagate", machinePrefix+"*")); len(ms) > 0 {
		for _, m := range ms {
			_ = os.RemoveAll(m)
		}
	}
	nspawnRunning := false
	for _, p := range backend.Procs() {
		if p.Comm == "systemd-nspawn" {
			nspawnRunning = true
			break
		}
	}
	if !nspawnRunning {
		locks, _ := filepath.Glob(filepath.Join(rt, "locks", "inode-*"))
		for _, l := range locks {
			_ = os.Remove(l)
		}
	}
	for _, d := range []string{filepath.Join(rt, "propagate"), filepath.Join(rt, "locks"), rt} {
		_ = os.Remove(d) // only if empty
	}
}
