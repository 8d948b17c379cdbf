package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Container is the systemd-nspawn backend: each host is a container with
// systemd as PID 1 on an overlay over the cached rootfs layers, in its own
// network namespace with a veth on the fleet's bridge.
type Container struct {
	opts fleet.Options
}

// NewContainer returns the container backend.
func NewContainer(opts fleet.Options) (*Container, error) {
	o, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Container{opts: o}, nil
}

var _ fleet.Provider = (*Container)(nil)

func init() {
	fleet.Register(backendContainer, func(o fleet.Options) (fleet.Provider, error) {
		c, err := NewContainer(o)
		if err != nil {
			return nil, err
		}
		return c, nil
	})
}

const backendContainer = "container"

// stopGrace is how long Down waits for a clean poweroff before killing.
const stopGrace = 10 * time.Second

func (c *Container) fleetDir(name string) string { return filepath.Join(c.opts.StateDir, name) }

// lockFleet serialises Up and Down of one fleet name. The lock file lives
// beside the fleet dir, not in it, because Down deletes the fleet dir.
func (c *Container) lockFleet(ctx context.Context, name string) (*fleet.Lock, error) {
	return fleet.AcquireLock(ctx, filepath.Join(c.opts.StateDir, "."+name+".lock"), "fleet "+name, c.opts.Logger)
}

// Up brings a fleet up. See fleet.Provider.
func (c *Container) Up(ctx context.Context, spec fleet.Spec) (*fleet.Fleet, error) {
	log := c.opts.Logger
	if spec.Image == "" {
		spec.Image = ImageExtra
	}
	if spec.Timeout <= 0 {
		spec.Timeout = fleet.DefaultTimeout
	}
	if err := fleet.ValidateName(spec.Name); err != nil {
		return nil, err
	}
	names, err := planHosts(spec, 0)
	if err != nil {
		return nil, err
	}
	if spec.Image != ImageBase && spec.Image != ImageExtra {
		return nil, fmt.Errorf("fleet %q: unknown image %q (want %q or %q)", spec.Name, spec.Image, ImageBase, ImageExtra)
	}
	if spec.NodeRuntime {
		if err := nodeRuntimeCheck(c.opts.StateDir); err != nil {
			return nil, fmt.Errorf("fleet %q: %w", spec.Name, err)
		}
	}
	lock, err := c.lockFleet(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	dir := c.fleetDir(spec.Name)
	if found := c.leftovers(ctx, spec.Name); len(found) > 0 {
		return nil, fmt.Errorf("fleet %q is already up (%s); run Down first (mage dev:fleetDown -fleet=%s)",
			spec.Name, strings.Join(found, "; "), spec.Name)
	}
	avail, err := fleet.MemAvailableMiB()
	if err != nil {
		return nil, err
	}
	if err := checkMemory(spec, len(names), avail); err != nil {
		return nil, err
	}
	if err := raiseInotifyLimits(c.opts.Logger); err != nil {
		return nil, err
	}
	im, err := EnsureImage(ctx, c.opts)
	if err != nil {
		return nil, fmt.Errorf("fleet %q: rootfs: %w", spec.Name, err)
	}
	lowers, _ := im.Lowers(spec.Image)

	start := time.Now()
	f, paths, err := c.create(ctx, spec, dir, lowers)
	if err != nil {
		// Nothing booted yet, so nothing is worth inspecting: roll back,
		// even when ctx was cancelled (Ctrl-C) halfway through.
		if derr := c.down(context.WithoutCancel(ctx), spec.Name, dir); derr != nil {
			err = errors.Join(err, fmt.Errorf("rolling back: %w", derr))
		}
		return nil, err
	}
	pids := map[string]int{}
	for _, h := range f.Hosts {
		pids[h.Name] = backend.ReadPid(paths[h.Name].pid)
	}
	log.Info(fmt.Sprintf("started %d host(s) of fleet %s in %s; waiting for them, up to %s", len(f.Hosts), f.Name, fleet.Since(start), spec.Timeout))
	wctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	if err := waitReady(wctx, f, paths, pids, log, start); err != nil {
		// Left up on purpose: a host that does not come up is one worth
		// logging into. Down removes it.
		return f, fmt.Errorf("fleet %q did not come up (it is left up for inspection; Down removes it): %w", f.Name, err)
	}
	log.Info(fmt.Sprintf("fleet %s up: %d host(s) in %s; inventory %s", f.Name, len(f.Hosts), fleet.Since(start), f.InventoryPath))
	return f, nil
}

// create makes the fleet's files, network and hosts, and starts the hosts.
func (c *Container) create(ctx context.Context, spec fleet.Spec, dir string, lowers []string) (*fleet.Fleet, map[string]hostPaths, error) {
	if err := removeTree(dir); err != nil { // leftovers were ruled out: this is stale files only
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, hostsDir), 0o755); err != nil {
		return nil, nil, err
	}
	// build/fleet holds root-owned host trees; keep them out of git.
	_ = os.WriteFile(filepath.Join(c.opts.StateDir, ".gitignore"), []byte("*\n"), 0o644)

	if err := fleet.NewFleetKey(fleet.KeyPath(dir), spec.Name); err != nil {
		return nil, nil, fmt.Errorf("fleet %q: key: %w", spec.Name, err)
	}
	pubBytes, err := os.ReadFile(fleet.KeyPath(dir) + ".pub")
	if err != nil {
		return nil, nil, err
	}
	password, err := fleet.NewPassword()
	if err != nil {
		return nil, nil, err
	}
	names, _ := planHosts(spec, 0)
	keyDirs := map[string]string{}
	pubKeys := map[string][]ssh.PublicKey{}
	for _, h := range names {
		kd, err := fleet.EnsureHostKeys(c.opts.CacheDir, spec.Name, h.Name)
		if err != nil {
			return nil, nil, err
		}
		keys, err := fleet.HostPublicKeys(kd)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		keyDirs[h.Name], pubKeys[h.Name] = kd, keys
	}

	st := &fleetState{
		Name: spec.Name, Backend: backendContainer, Image: spec.Image, Lowers: lowers,
		Bridge: bridgeName(spec.Name), SudoPassword: password, Created: time.Now().UTC(),
		NodeRuntime: spec.NodeRuntime,
	}
	if err := c.createNetwork(ctx, spec, dir, st, pubKeys); err != nil {
		return nil, nil, err
	}
	f := fleetFromState(dir, st)
	if err := fleet.WriteFleetFiles(f, pubKeys); err != nil {
		return nil, nil, err
	}
	paths := map[string]hostPaths{}
	for _, h := range st.Hosts {
		paths[h.Name] = pathsFor(dir, h.Name)
	}
	// The first host hashes the sudo password; the others reuse the hash
	// and are prepared and started a few at a time (the work is mostly
	// waiting on mount, chroot and fork).
	first := st.Hosts[0]
	shadow, err := prepareHost(ctx, st, paths[first.Name], first, keyDirs[first.Name], string(pubBytes), "")
	if err != nil {
		return nil, nil, err
	}
	var g errgroup.Group
	g.SetLimit(4)
	for i, h := range st.Hosts {
		g.Go(func() error {
			if i > 0 {
				if _, err := prepareHost(ctx, st, paths[h.Name], h, keyDirs[h.Name], string(pubBytes), shadow); err != nil {
					return err
				}
			}
			_, err := startHost(paths[h.Name], netnsName(spec.Name, h.Name), h, st.NodeRuntime)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return f, paths, nil
}

// createNetwork picks the fleet's /24, records the state (before creating
// anything, so a crash from here on leaves something Down can read) and
// creates the bridge and every host's namespace.
func (c *Container) createNetwork(ctx context.Context, spec fleet.Spec, dir string, st *fleetState, pubKeys map[string][]ssh.PublicKey) error {
	nl, err := fleet.AcquireLock(ctx, netLockPath, "fleet network", c.opts.Logger)
	if err != nil {
		return err
	}
	defer nl.Release()
	used, err := usedOctets(ctx)
	if err != nil {
		return err
	}
	if st.Octet, err = chooseOctet(spec.Name, used); err != nil {
		return err
	}
	if st.Hosts, err = planHosts(spec, st.Octet); err != nil {
		return err
	}
	for i, h := range st.Hosts {
		st.Hosts[i].HostKey = fleet.AuthorizedKey(pubKeys[h.Name][0], "") // ed25519 comes first
	}
	if err := backend.WriteState(dir, st); err != nil {
		return err
	}
	gw := gatewayAddr(st.Octet)
	if err := createBridge(ctx, st.Bridge, gw); err != nil {
		return err
	}
	for _, h := range st.Hosts {
		if err := createHostNet(ctx, h.Name, netnsName(spec.Name, h.Name), vethName(spec.Name, h.Name), st.Bridge, h.Address, gw); err != nil {
			return err
		}
	}
	return nil
}

// leftovers lists what of a fleet exists on this machine: its state, its
// processes, mounts, namespaces and links. Empty means the fleet is down.
func (c *Container) leftovers(ctx context.Context, name string) []string {
	var found []string
	dir := c.fleetDir(name)
	if fileExists(filepath.Join(dir, backend.StateFile)) {
		found = append(found, "state in "+dir)
	}
	if ps := fleetProcs(name); len(ps) > 0 {
		found = append(found, fmt.Sprintf("%d host process(es) (systemd-nspawn and its supervisor loop)", len(ps)))
	}
	if ms, _ := mountsUnder(dir); len(ms) > 0 {
		found = append(found, fmt.Sprintf("%d mount(s) under %s", len(ms), dir))
	}
	if cg := fleetCgroups(name); len(cg) > 0 {
		found = append(found, "cgroups "+strings.Join(cg, ", "))
	}
	if ns := listNetns(netnsPrefix(name)); len(ns) > 0 {
		found = append(found, "network namespaces "+strings.Join(ns, ", "))
	}
	links, _ := listLinks(ctx, vethPrefix(name))
	if linkExists(ctx, bridgeName(name)) {
		links = append(links, bridgeName(name))
	}
	if len(links) > 0 {
		found = append(found, "links "+strings.Join(links, ", "))
	}
	return found
}

// Get returns a fleet that is up.
func (c *Container) Get(ctx context.Context, name string) (*fleet.Fleet, error) {
	if err := fleet.ValidateName(name); err != nil {
		return nil, err
	}
	dir := c.fleetDir(name)
	st, err := backend.ReadState[fleetState](dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fleet %q is not up (no %s)", name, filepath.Join(dir, backend.StateFile))
	}
	if err != nil {
		return nil, err
	}
	return fleetFromState(dir, st), nil
}
