//go:build mage

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/colonel-byte/cargoship/internal/repo"
	testfleet "github.com/colonel-byte/cargoship/test/fleet"
	fleetcontainer "github.com/colonel-byte/cargoship/test/fleet/container"
)

// Dev holds targets for working on cargoship locally.
type Dev mg.Namespace

// FleetUp brings up a test fleet of container hosts and writes its inventory. Flags: -control=1 -worker=2 -infra=0 -fleet=dev -image=extra|base -timeout=5m -backend=container -noderuntime (hosts that run containerd and a real kubelet).
func (Dev) FleetUp(ctx context.Context, control, worker, infra *int, fleet *string, image *string, timeout *time.Duration, backend *string, nodeRuntime *bool) error {
	fleetLogging()
	spec := testfleet.Spec{
		Name:    fleetOr(fleet, "dev"),
		Control: intOr(control, 1),
		Worker:  intOr(worker, 2),
		Infra:   intOr(infra, 0),
		Image:   fleetOr(image, fleetcontainer.ImageExtra),
	}
	if timeout != nil {
		spec.Timeout = *timeout
	}
	if nodeRuntime != nil {
		spec.NodeRuntime = *nodeRuntime
	}
	p, err := testfleet.Backend(fleetOr(backend, ""))
	if err != nil {
		return err
	}
	node := ""
	if spec.NodeRuntime {
		node = ", node runtime (containerd and kubelet can run)"
	}
	fmt.Fprintf(os.Stderr, "Bringing up fleet %s: %d controller, %d worker, %d infra host(s), image %s%s\n",
		spec.Name, spec.Control, spec.Worker, spec.Infra, spec.Image, node)
	f, err := p.Up(ctx, spec)
	if f != nil {
		if lerr := fleetPrint(ctx, p, f.Name); lerr != nil && err == nil {
			err = lerr
		}
		fmt.Printf("\nInventory: %s\n", repo.Rel(f.InventoryPath))
		if len(f.Hosts) > 0 {
			fmt.Printf("SSH:       ssh %s\n", strings.Join(repo.RelArgs(testfleet.SSHArgs(f, f.Hosts[0], testfleet.UserRoot)[1:]), " "))
		}
		fmt.Printf("Sudo:      user %s, password %s\n", f.SudoUser, f.SudoPassword)
	}
	return err
}

// FleetDown stops a fleet and removes every trace of it (safe to repeat). Flags: -fleet=dev -backend=container.
func (Dev) FleetDown(ctx context.Context, fleet *string, backend *string) error {
	fleetLogging()
	p, err := testfleet.Backend(fleetOr(backend, ""))
	if err != nil {
		return err
	}
	return p.Down(ctx, fleetOr(fleet, "dev"))
}

// FleetList shows the fleets that are up (or left over) and their hosts. Flags: -fleet=NAME to show one, -backend=container.
func (Dev) FleetList(ctx context.Context, fleet *string, backend *string) error {
	fleetLogging()
	p, err := testfleet.Backend(fleetOr(backend, ""))
	if err != nil {
		return err
	}
	return fleetPrint(ctx, p, fleetOr(fleet, ""))
}

// FleetShell opens a root shell on one host of a fleet: mage dev:fleetShell kc0 [-fleet=dev].
func (Dev) FleetShell(ctx context.Context, host string, fleet *string, backend *string) error {
	fleetLogging()
	p, err := testfleet.Backend(fleetOr(backend, ""))
	if err != nil {
		return err
	}
	return p.Shell(ctx, fleetOr(fleet, "dev"), host)
}

// FleetImage builds (when missing or stale) and verifies the cached rootfs layers the container fleet boots from.
func (Dev) FleetImage(ctx context.Context) error {
	fleetLogging()
	im, err := fleetcontainer.EnsureImage(ctx, testfleet.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("base layer:  %s\nextra layer: %s\n", im.Base, im.Extra)
	return nil
}

// fleetPrint writes the table of one fleet (name != "") or of all fleets.
func fleetPrint(ctx context.Context, p testfleet.Provider, name string) error {
	return fleetTable(ctx, p, name, "mage dev:fleetDown")
}

// fleetTable is fleetPrint naming down, the command that cleans a fleet up.
func fleetTable(ctx context.Context, p testfleet.Provider, name, down string) error {
	all, err := p.List(ctx)
	if err != nil {
		return err
	}
	shown := 0
	for _, s := range all {
		if name != "" && s.Name != name {
			continue
		}
		shown++
		fmt.Printf("fleet %s (%s) %s\n", s.Name, s.Backend, repo.Rel(s.Dir))
		if len(s.Hosts) > 0 {
			tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
			_, _ = fmt.Fprintln(tw, "HOST\tROLE\tPROFILE\tSTATE\tADDRESS")
			for _, h := range s.Hosts {
				state := h.State
				if h.PID > 0 {
					state = fmt.Sprintf("%s (pid %d)", h.State, h.PID)
				}
				_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, h.Role, h.Profile, state, h.Address)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, pr := range s.Problems {
			fmt.Printf("  problem: %s (%s -fleet=%s cleans up)\n", pr, down, s.Name)
		}
	}
	if shown == 0 {
		if name != "" {
			fmt.Printf("fleet %s is not up\n", name)
		} else {
			fmt.Println("no fleets are up")
		}
	}
	return nil
}

// fleetLogging prints the fleet's progress lines plainly ("  ready: kc0
// 2.6s"), since a person reads them while waiting.
func fleetLogging() { slog.SetDefault(slog.New(testfleet.LineHandler(os.Stderr))) }

func fleetOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
