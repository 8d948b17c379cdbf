package cluster

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	_ "github.com/colonel-byte/cargoship/test/fleet/container"
	"github.com/colonel-byte/cargoship/test/fleet/microvm"
)

// fleetName is the fleet the suite brings up: CARGOSHIP_E2E_FLEET, else
// one per mode so a stage-only run and a full run can be up together, and a
// dev fleet beside them.
func (w *world) fleetName() string {
	if name := os.Getenv(envFleet); name != "" {
		return name
	}
	if w.stage {
		return "e2estage"
	}
	return "e2e"
}

// world is the fleet a run acts on and what the suite knows about it.
type world struct {
	backend string
	// distro is the engine the test package installs (CARGOSHIP_E2E_DISTRO).
	distro e2eutil.Distro
	fleet  *fleet.Fleet // container and microvm backends
	// prov is the backend that brought fleet up.
	prov  fleet.Provider
	views views
	// applyPath and allPath are inventory files of the two views.
	applyPath, allPath string
	knownHosts         string
	kubeconfig         string // where phase 28 writes the admin kubeconfig
	stage              bool
	// noFanout is CARGOSHIP_E2E_NO_FANOUT: every file sent from here.
	noFanout bool
	// userPkg and userUpgrade are CARGOSHIP_E2E_PACKAGE and
	// CARGOSHIP_E2E_UPGRADE_PACKAGE, "" when the suite builds its own.
	userPkg, userUpgrade string
	stoodDown            []string
	log                  *slog.Logger
}

// standDown records an assertion this backend does not make, so a green
// run does not read as broader coverage than it was.
func (w *world) standDown(t *testing.T, what, why string) {
	t.Helper()
	line := what + ": " + why
	w.stoodDown = append(w.stoodDown, line)
	t.Logf("stood down: %s", line)
}

// provision brings up (or reads) the hosts a run acts on.
func provision(t *testing.T) *world {
	t.Helper()
	distro, err := suiteDistro()
	if err != nil {
		t.Fatal(err)
	}
	stage, err := stageOnly()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{backend: backendName(), distro: distro, stage: stage, log: testLogger(t)}
	if w.noFanout, err = noFanout(); err != nil {
		t.Fatal(err)
	}
	if w.userPkg, w.userUpgrade, err = userPackages(); err != nil {
		t.Fatal(err)
	}
	if w.userPkg != "" {
		// The engine is the package's, whatever the distro knob says: a
		// knob that names another is a mistake, not a choice.
		if w.distro = userDistro(t, w.userPkg); os.Getenv(envDistro) != "" && os.Getenv(envDistro) != w.distro.Name {
			t.Fatalf("%s=%s but %s installs %s", envDistro, os.Getenv(envDistro), w.userPkg, w.distro.Name)
		}
		t.Logf("%s: walking %s (%s %s), not the test package", envPackage, w.userPkg, w.distro.Name, w.distro.Version)
	}
	switch w.backend {
	case backendContainer:
		w.provisionContainers(t)
	case backendInventory:
		w.readInventory(t)
	case backendMicroVM:
		w.provisionVMs(t)
	default:
		t.Fatalf("%s=%q is not a backend: use %s, %s or %s", envBackend, w.backend, backendContainer, backendMicroVM, backendInventory)
	}
	t.Cleanup(func() {
		if len(w.stoodDown) > 0 {
			t.Logf("assertions stood down in this run (%d):", len(w.stoodDown))
			for _, s := range w.stoodDown {
				t.Logf("  - %s", s)
			}
		}
	})
	return w
}

// provisionContainers brings up a fresh container fleet: five hosts in two
// roles for a stage-only run, one controller and three workers (one held
// out for the join walk) for a full one.
func (w *world) provisionContainers(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the container fleet needs root (network namespaces, overlay mounts, systemd-nspawn): run as root, as CI does")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	prov, err := fleet.NewBackend("container", fleet.Options{Logger: w.log})
	if err != nil {
		t.Fatal(err)
	}
	// A run killed before its teardown leaves its fleet behind; a stale
	// fleet is never adopted (its hosts carry a previous run's state).
	if err := prov.Down(ctx, w.fleetName()); err != nil {
		t.Fatalf("removing a stale %s fleet: %v", w.fleetName(), err)
	}
	spec := fleet.Spec{Name: w.fleetName(), Control: 1, Worker: 3}
	join := "kw2"
	if w.stage {
		spec, join = fleet.Spec{Name: w.fleetName(), Control: 1, Worker: 3, Infra: 1}, ""
	}
	f, err := prov.Up(ctx, spec)
	if err != nil {
		t.Fatalf("bringing up the %s fleet: %v", w.fleetName(), err)
	}
	t.Cleanup(func() {
		if keep, _ := boolEnv(envKeep); keep {
			t.Logf("%s set: the fleet stays up; remove it with `mage dev:fleetDown e2e`", envKeep)
			return
		}
		if err := prov.Down(context.Background(), w.fleetName()); err != nil {
			t.Errorf("tearing down the fleet: %v", err)
		}
	})
	w.fleet, w.prov, w.knownHosts = f, prov, f.KnownHostsPath
	c, _, err := v1alpha1.LoadClusterFile(f.InventoryPath)
	if err != nil {
		t.Fatalf("the fleet's inventory does not load: %v", err)
	}
	w.setViews(t, c, join)
}

// provisionVMs brings up a fresh fleet of local VMs (test/fleet/microvm):
// a controller and a worker, each with a kernel of its own, SELinux
// enforcing and fapolicyd active, so phases 8, 10 and 11 do real work and
// a reboot can be checked. Two emulated guests are what fits this suite's
// time on a machine without KVM; no host is held out to join. The
// backend's own checks run on these guests too (checkVMFleet, and Down's
// at teardown), so CI boots no others for them.
func (w *world) provisionVMs(t *testing.T) {
	t.Helper()
	mem, err := vmMemory()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	prov, err := microvm.New(fleet.Options{Logger: w.log})
	if err != nil {
		t.Fatal(err)
	}
	if err := prov.Down(ctx, w.fleetName()); err != nil {
		t.Fatalf("removing a stale %s fleet: %v", w.fleetName(), err)
	}
	// costs no boot: refused before anything starts
	microvm.CheckUpRefusesMemory(ctx, t, prov, w.fleetName())
	f, err := prov.Up(ctx, fleet.Spec{Name: w.fleetName(), Control: 1, Worker: 1, MemoryMiB: mem})
	t.Cleanup(func() {
		if keep, _ := boolEnv(envKeep); keep {
			t.Logf("%s set: the fleet stays up; remove it with `mage dev:vmDown -fleet=%s`", envKeep, w.fleetName())
			return
		}
		// Down, and the backend's checks of what it leaves: nothing
		microvm.CheckFleetDown(context.Background(), t, prov, w.fleetName())
	})
	if err != nil {
		t.Fatalf("bringing up the %s fleet: %v", w.fleetName(), err)
	}
	w.fleet, w.prov, w.knownHosts = f, prov, f.KnownHostsPath
	c, _, err := v1alpha1.LoadClusterFile(f.InventoryPath)
	if err != nil {
		t.Fatalf("the fleet's inventory does not load: %v", err)
	}
	w.setViews(t, c, "")
	w.checkVMFleet(ctx, t, prov, f)
}

// readInventory reads a user's inventory (docs/e2e.md, Backends): it is
// read through the loader the CLI uses, and refused before any host is
// touched when it does not have what the suite needs.
func (w *world) readInventory(t *testing.T) {
	t.Helper()
	p := os.Getenv(envInventory)
	if p == "" {
		t.Fatalf("%s=%s needs %s naming a cluster document", envBackend, backendInventory, envInventory)
	}
	c, _, err := v1alpha1.LoadClusterFile(p)
	if err != nil {
		t.Fatalf("%s: %v", envInventory, err)
	}
	if err := checkSuiteInventory(c); err != nil {
		t.Fatalf("%s %s: %v", envInventory, p, err)
	}
	w.knownHosts = "" // from SSH_KNOWN_HOSTS, as the CLI reads it
	w.setViews(t, c, os.Getenv(envJoinHost))
	w.standDown(t, "firewall front-end variety", "the suite enables firewalld and ufw only on hosts it created")
}

// setViews splits the inventory around the join host and writes each view
// to a file, as the CLI would read it.
func (w *world) setViews(t *testing.T, c *v1alpha1.Cluster, join string) {
	t.Helper()
	v, err := holdOut(c, join)
	if err != nil {
		t.Fatal(err)
	}
	w.views = v
	dir := t.TempDir()
	w.kubeconfig = filepath.Join(dir, "kubeconfig")
	w.applyPath, w.allPath = filepath.Join(dir, "apply.yaml"), filepath.Join(dir, "all.yaml")
	for path, doc := range map[string]*v1alpha1.Cluster{w.applyPath: v.Apply, w.allPath: v.All} {
		b, err := yaml.MarshalWithOptions(doc, yaml.UseJSONMarshaler())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n := countsFor(v.Apply)
	t.Logf("backend %s: %d hosts (%d controllers, %d workers, %d infra) in the apply view; join host %q; stage only %v",
		w.backend, n.Hosts, n.Controllers, n.Workers, n.Infra, v.Join, w.stage)
}

// testLogger logs through the test log.
func testLogger(t *testing.T) *slog.Logger { return e2eutil.TestLogger(t) }
