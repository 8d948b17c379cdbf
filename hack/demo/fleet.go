package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/test/fleet"
	_ "github.com/colonel-byte/cargoship/test/fleet/container"
)

// provider is the container backend with its progress lines printed
// plainly: a person is watching them while the hosts boot.
func provider() (fleet.Provider, error) {
	return fleet.NewBackend("container", fleet.Options{Logger: slog.New(fleet.LineHandler(os.Stdout))})
}

// checkFleetFree refuses a fleet of the demo's name that is already up: it
// may be someone's, so the demo never tears down a fleet it did not bring
// up. It runs before anything is built, so the refusal comes at once.
func (d *demo) checkFleetFree(ctx context.Context) error {
	p, err := provider()
	if err != nil {
		return err
	}
	list, err := p.List(ctx)
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.Name == d.opts.fleet {
			return fmt.Errorf("a fleet named %q is already up (%s). Pick another name with -fleet NAME, or tear it down first with: ./hack/demo.sh -down -fleet %s (or: mage dev:fleetDown -fleet=%s)",
				s.Name, repo.Rel(s.Dir), s.Name, s.Name)
		}
	}
	return nil
}

// fleetUp brings up one controller and the workers.
func (d *demo) fleetUp(ctx context.Context) error {
	p, err := provider()
	if err != nil {
		return err
	}
	// Checked again: the build took a while.
	if err := d.checkFleetFree(ctx); err != nil {
		return err
	}
	spec := fleet.Spec{Name: d.opts.fleet, Control: 1, Worker: d.opts.workers}
	fmt.Printf("bringing up fleet %s: 1 controller, %d worker(s), Debian in systemd-nspawn containers\n", spec.Name, spec.Worker)
	// The one thing the demo cannot make offline is the hosts' Debian
	// image: the first fleet on a machine builds it from the apt mirror.
	fmt.Println("(the first fleet on a machine builds the hosts' Debian image once from this machine's apt mirror and caches it; `mage dev:fleetImage` does it ahead of time)")
	d.owned = true // from here on, whatever Up leaves behind is ours to remove
	f, err := p.Up(ctx, spec)
	if err != nil {
		return err
	}
	d.fleet = f
	for _, h := range f.Hosts {
		fmt.Printf("  %-4s %-10s %s\n", h.Name, h.Role, h.Address)
	}
	fmt.Printf("inventory:   %s\nknown_hosts: %s\n", repo.Rel(f.InventoryPath), repo.Rel(f.KnownHostsPath))
	return nil
}

// teardown removes the fleet the demo brought up, unless -keep, in which
// case it says how to use it and remove it later.
func (d *demo) teardown() error {
	if !d.owned {
		return nil
	}
	if d.opts.keep {
		d.printKeep()
		return nil
	}
	d.n++
	fmt.Printf("\n==> [%d] Tear down fleet %s\n", d.n, d.opts.fleet)
	t := time.Now()
	if err := fleetDown(d.opts.fleet); err != nil {
		fmt.Printf("<== [%d] FAILED after %s\n", d.n, since(t))
		return fmt.Errorf("tearing down fleet %s: %w (retry with: ./hack/demo.sh -down -fleet %s)", d.opts.fleet, err, d.opts.fleet)
	}
	fmt.Printf("<== [%d] done in %s\n", d.n, since(t))
	return nil
}

// fleetDown removes a fleet on a context of its own, so it runs after an
// interrupt too.
func fleetDown(name string) error {
	p, err := provider()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return p.Down(ctx, name)
}

// printKeep tells the user how to reach the fleet left up by -keep.
func (d *demo) printKeep() {
	name := d.opts.fleet
	fmt.Printf("\nFleet %s is left up (-keep).\n", name)
	if f := d.fleet; f != nil && len(f.Hosts) > 0 {
		args := fleet.SSHArgs(f, f.Hosts[0], fleet.UserRoot)
		fmt.Printf("  log in:    ssh %s\n", strings.Join(repo.RelArgs(args), " "))
		fmt.Printf("  kubectl:   ssh %s k3s kubectl get nodes -o wide\n", strings.Join(repo.RelArgs(args[1:]), " "))
		if d.pkg != "" {
			fmt.Printf("  apply:     SSH_KNOWN_HOSTS=%s %s apply %s --config %s --confirm -H -F\n",
				repo.Rel(f.KnownHostsPath), repo.Rel(d.cargoship()), repo.Rel(d.pkg), repo.Rel(f.InventoryPath))
		}
	}
	fmt.Printf("  tear down: ./hack/demo.sh -down -fleet %s   (or: mage dev:fleetDown -fleet=%s)\n", name, name)
}
