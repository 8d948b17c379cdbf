package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// demo is one run: where it builds, the fleet it brought up, the package.
type demo struct {
	opts  options
	root  string // the repository
	dir   string // build/demo
	start time.Time
	n     int // steps printed so far

	owned bool         // the demo started bringing the fleet up: teardown removes it
	fleet *fleet.Fleet // set once the fleet is up
	pkg   string       // the package create wrote
}

func (d *demo) defDir() string    { return filepath.Join(d.dir, "definition") }
func (d *demo) cargoship() string { return filepath.Join(d.dir, "cargoship") }

// env is what every cargoship command runs with: the fleet's known_hosts,
// so host keys are checked strictly against the keys the fleet installed.
func (d *demo) env() []string {
	return []string{"SSH_KNOWN_HOSTS=" + repo.Rel(d.fleet.KnownHostsPath)}
}

// steps runs the demo up to, not including, teardown. It stops at the first
// step that fails: each one needs the one before.
func (d *demo) steps(ctx context.Context) error {
	fmt.Printf("cargoship demo: build a package, bring up %d hosts, install Kubernetes on them (no network needed)\n", 1+d.opts.workers)
	if err := d.checkFleetFree(ctx); err != nil {
		return err
	}
	if err := d.step("Build cargoship and the test engine (a k3s test double, "+engineBuilt+")", func() error {
		return d.build(ctx)
	}); err != nil {
		return err
	}
	image, stopRegistry := "", func() {}
	defer func() { stopRegistry() }()
	if err := d.step("Write the distro definition", func() error {
		// A registry inside this process on loopback, holding one small
		// random image, so create pulls an image the way it would from a
		// real registry, with no network.
		ref, stop, err := imagetest.ServeRandom("demo/pause:1.0", runtime.GOARCH, 32<<10, 2)
		if err != nil {
			// Images are the one optional part: say so and go on without.
			fmt.Printf("no in-process registry (%v): the package will carry no image\n", err)
		} else {
			image, stopRegistry = ref, stop
			fmt.Printf("serving image %s from a registry inside this process, for create to pull\n", image)
		}
		if err := d.writeDefinition(image); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(d.defDir(), "distro.yaml"))
		if err != nil {
			return err
		}
		fmt.Printf("%s:\n", repo.Rel(filepath.Join(d.defDir(), "distro.yaml")))
		indent(string(b))
		return nil
	}); err != nil {
		return err
	}
	if err := d.step("Bring up the fleet", func() error { return d.fleetUp(ctx) }); err != nil {
		return err
	}
	if err := d.step("cargoship create: build the offline package", func() error { return d.create(ctx, image != "") }); err != nil {
		return err
	}
	stopRegistry()
	stopRegistry = func() {}
	if err := d.step("cargoship inspect: verify the package and show what it carries", func() error {
		_, err := command(ctx, false, nil, d.cargoship(), "inspect", d.pkg)
		return err
	}); err != nil {
		return err
	}
	if err := d.step("cargoship apply --dry-run: what would change on each host", func() error {
		// The same flags as the apply after it, so the preview is of that.
		_, err := d.apply(ctx, "--dry-run", "-H", "-F")
		return err
	}); err != nil {
		return err
	}
	if err := d.step("cargoship apply --confirm: install", func() error {
		_, err := d.apply(ctx, "--confirm", "-H", "-F")
		return err
	}); err != nil {
		return err
	}
	if err := d.step("The result, seen from inside the hosts", func() error { return d.showResult(ctx) }); err != nil {
		return err
	}
	return d.step("cargoship apply again: a converged cluster changes nothing", func() error {
		out, err := d.apply(ctx, "--confirm", "-H", "-F")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "nothing changed") || !strings.Contains(out, "uploaded: 0 bytes") {
			return errors.New("the second apply changed something or uploaded bytes (its summary above says what): a converged cluster should change nothing")
		}
		fmt.Println("the second apply changed nothing and uploaded nothing, as it should")
		return nil
	})
}

// create runs cargoship create into build/demo and finds the package.
func (d *demo) create(ctx context.Context, insecure bool) error {
	old, _ := filepath.Glob(filepath.Join(d.dir, "cargoship-"+distroName+"-*.tar.zst"))
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	args := []string{"create", d.defDir(), "-o", d.dir, "--cache-dir", filepath.Join(d.dir, "cache")}
	if insecure {
		// The in-process registry speaks plain HTTP.
		args = append(args, "--insecure-registry")
	}
	if _, err := command(ctx, false, nil, d.cargoship(), args...); err != nil {
		return err
	}
	made, _ := filepath.Glob(filepath.Join(d.dir, "cargoship-"+distroName+"-*.tar.zst"))
	if len(made) != 1 {
		return fmt.Errorf("create wrote %d packages named cargoship-%s-*.tar.zst in %s, want 1", len(made), distroName, repo.Rel(d.dir))
	}
	d.pkg = made[0]
	if st, err := os.Stat(d.pkg); err == nil {
		fmt.Printf("package: %s (%.1f MB)\n", repo.Rel(d.pkg), float64(st.Size())/1e6)
	}
	return nil
}

// apply runs cargoship apply on the package with the fleet's inventory and
// returns its standard output (the summary).
func (d *demo) apply(ctx context.Context, flags ...string) (string, error) {
	args := append([]string{"apply", d.pkg, "--config", d.fleet.InventoryPath}, flags...)
	return command(ctx, true, d.env(), d.cargoship(), args...)
}

// showResult looks at the cluster from inside the hosts, over SSH: the
// engine's service on each host, then the nodes through k3s kubectl.
func (d *demo) showResult(ctx context.Context) error {
	f := d.fleet
	run := func(host, cmd string) (string, error) {
		fmt.Printf("[%s]$ %s\n", host, cmd)
		out, _, err := f.Run(ctx, host, fleet.UserRoot, cmd)
		return out, err
	}
	ctl := f.Role(fleet.RoleController)[0].Name
	running := true
	for _, h := range f.Hosts {
		unit := "k3s-agent"
		if h.Role == fleet.RoleController {
			unit = "k3s"
		}
		out, err := run(h.Name, fmt.Sprintf("test -x /usr/local/bin/k3s && /usr/local/bin/k3s --version | head -1; systemctl is-active %s", unit))
		indent(out)
		if err != nil {
			running = false
		}
	}
	out, err := run(ctl, "cat /etc/rancher/k3s/config.yaml")
	if err != nil {
		return fmt.Errorf("the controller has no engine config: %w", err)
	}
	indent(out)
	if !running {
		fmt.Println("apply did not leave k3s running on every host: the engine phases did not start it.")
		return errors.New("k3s is not active on every host after apply")
	}
	out, err = run(ctl, "k3s kubectl get nodes -o wide")
	indent(out)
	return err
}
