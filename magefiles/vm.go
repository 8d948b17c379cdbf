//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
	testfleet "github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/microvm"
)

// The local VM fleet (test/fleet/microvm): qemu guests with a kernel of their own, SELinux enforcing and fapolicyd (docs/fleet.md, "The VM fleet").

// VmUp brings up a fleet of qemu guests and writes its inventory; no root needed once the image is built. Flags: -control=1 -worker=1 -infra=0 -memory=4096 (MiB per guest) -cpus=2 -fleet=dev -timeout=10m.
func (Dev) VmUp(ctx context.Context, control, worker, infra, memory, cpus *int, fleet *string, timeout *time.Duration) error {
	fleetLogging()
	spec := testfleet.Spec{
		Name:      fleetOr(fleet, "dev"),
		Control:   intOr(control, 1),
		Worker:    intOr(worker, 1),
		Infra:     intOr(infra, 0),
		MemoryMiB: intOr(memory, microvm.DefaultMemoryMiB),
		CPUs:      intOr(cpus, microvm.DefaultCPUs),
		Image:     microvm.ImageBuiltin,
	}
	if timeout != nil {
		spec.Timeout = *timeout
	}
	p, err := testfleet.Backend("microvm")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "Bringing up VM fleet %s: %d controller, %d worker, %d infra guest(s), %d MiB and %d vCPU each, image %s\n",
		spec.Name, spec.Control, spec.Worker, spec.Infra, spec.MemoryMiB, spec.CPUs, spec.Image)
	f, err := p.Up(ctx, spec)
	if f != nil {
		if lerr := vmPrint(ctx, p, f.Name); lerr != nil && err == nil {
			err = lerr
		}
		fmt.Printf("\nInventory: %s\n", repo.Rel(f.InventoryPath))
		if len(f.Hosts) > 0 {
			fmt.Printf("SSH:       ssh %s\n", strings.Join(repo.RelArgs(testfleet.SSHArgs(f, f.Hosts[0], testfleet.UserRoot)[1:]), " "))
		}
		fmt.Printf("Sudo:      user %s, password %s\n", f.SudoUser, f.SudoPassword)
		fmt.Printf("Consoles:  %s\n", repo.Rel(f.Dir+"/NODE/console.log"))
	}
	return err
}

// VmDown stops a VM fleet's guests and removes every trace of it: no qemu process, nothing under build/microvm/FLEET (safe to repeat). Flags: -fleet=dev.
func (Dev) VmDown(ctx context.Context, fleet *string) error {
	fleetLogging()
	p, err := testfleet.Backend("microvm")
	if err != nil {
		return err
	}
	return p.Down(ctx, fleetOr(fleet, "dev"))
}

// VmList shows the VM fleets and their guests. Flags: -fleet=NAME to show one.
func (Dev) VmList(ctx context.Context, fleet *string) error {
	fleetLogging()
	p, err := testfleet.Backend("microvm")
	if err != nil {
		return err
	}
	return vmPrint(ctx, p, fleetOr(fleet, ""))
}

// VmShell opens a root shell on one guest of a VM fleet: mage dev:vmShell kc0 [-fleet=dev].
func (Dev) VmShell(ctx context.Context, host string, fleet *string) error {
	fleetLogging()
	p, err := testfleet.Backend("microvm")
	if err != nil {
		return err
	}
	return p.Shell(ctx, fleetOr(fleet, "dev"), host)
}

// VmImage builds (when missing or its recipe changed) the built-in guest image: Debian 12 from this machine's apt mirror, SELinux enforcing and labelled, fapolicyd, firewalld. Needs root (debootstrap); about 10 minutes under TCG.
func (Dev) VmImage(ctx context.Context) error {
	fleetLogging()
	dir, err := microvm.DefaultCacheDir()
	if err != nil {
		return err
	}
	im, err := microvm.EnsureImage(ctx, dir, nil)
	if err != nil {
		return err
	}
	fmt.Printf("image %s\n  kernel: %s\n  initrd: %s\n  disk:   %s\n  cmdline: %s\n", im.Recipe, im.Kernel, im.Initrd, im.Disk, im.Cmdline)
	return nil
}

// vmPrint is fleetPrint with the VM fleet's clean-up command.
func vmPrint(ctx context.Context, p testfleet.Provider, name string) error {
	return fleetTable(ctx, p, name, "mage dev:vmDown")
}
