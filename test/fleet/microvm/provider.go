package microvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// ImageBuiltin names the built-in guest image (Debian 12, SELinux
// enforcing, fapolicyd) in Spec.Image; "" means it too.
const ImageBuiltin = "debian12"

// DefaultTimeout bounds a bring-up's wait for its guests. Emulated guests
// boot in about 45 s each, and two cores share every guest's vCPUs.
const DefaultTimeout = 10 * time.Minute

// Provider is the microvm fleet backend.
type Provider struct{ s settings }

var (
	_ fleet.Provider = (*Provider)(nil)
	_ fleet.Rebooter = (*Provider)(nil)
)

// New returns the backend with o's directories (defaults: see defaults).
func New(o fleet.Options) (*Provider, error) {
	s, err := defaults(o)
	if err != nil {
		return nil, err
	}
	return &Provider{s: s}, nil
}

func (p *Provider) fleetDir(name string) string { return filepath.Join(p.s.stateDir, name) }

func (p *Provider) lock(ctx context.Context, name string) (*fleet.Lock, error) {
	return fleet.AcquireLock(ctx, filepath.Join(p.s.stateDir, "."+name+".lock"), "fleet "+name, p.s.log)
}

// Up brings a fleet of guests up and waits until each has run its
// first-boot configuration and finished booting. Ctrl-C leaves what was
// started running (qemu detaches); Down removes it.
func (p *Provider) Up(ctx context.Context, spec fleet.Spec) (*fleet.Fleet, error) {
	log := p.s.log
	if err := CheckTools(); err != nil {
		return nil, err
	}
	if err := fleet.ValidateSpec(spec); err != nil {
		return nil, err
	}
	if spec.Image != "" && spec.Image != ImageBuiltin {
		return nil, fmt.Errorf("fleet %q: image %q: the microvm backend boots its built-in image only (%q)", spec.Name, spec.Image, ImageBuiltin)
	}
	if spec.NodeRuntime {
		return nil, fmt.Errorf("fleet %q: NodeRuntime is a container backend setting: a guest has its own kernel and runs containerd as any machine does", spec.Name)
	}
	mem, cpus, timeout := spec.MemoryMiB, spec.CPUs, spec.Timeout
	if mem <= 0 {
		mem = DefaultMemoryMiB
	}
	if cpus <= 0 {
		cpus = DefaultCPUs
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	lock, err := p.lock(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	dir := p.fleetDir(spec.Name)
	if running := p.running(spec.Name); len(running) > 0 {
		return nil, fmt.Errorf("fleet %q is already up (qemu running for %s); use it, or run Down first (mage dev:vmDown -fleet=%s)",
			spec.Name, strings.Join(running, ", "), spec.Name)
	}
	// a directory with no guest running is a crashed run's: nothing in it
	// is worth keeping
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	hosts, err := fleet.PlanHosts(spec, func(int) string { return "" })
	if err != nil {
		return nil, err
	}
	avail, err := fleet.MemAvailableMiB()
	if err != nil {
		return nil, err
	}
	if err := checkFit(spec.Name, len(hosts), mem, avail); err != nil {
		return nil, err
	}
	accel := DetectAccel()
	log.Info(fmt.Sprintf("microvm: %s: %s", accel.Name, accel.Reason))
	img, err := EnsureImage(ctx, p.s.cacheDir, log)
	if err != nil {
		return nil, fmt.Errorf("fleet %q: image: %w", spec.Name, err)
	}
	octet, err := p.chooseOctet(spec.Name)
	if err != nil {
		return nil, err
	}
	for i := range hosts {
		hosts[i].Address = guestAddress(octet, i)
	}
	start := time.Now()
	f, err := p.create(ctx, dir, &vmState{
		Name: spec.Name, Backend: backendName, Octet: octet, MemoryMiB: mem, CPUs: cpus,
		Accel: accel.Name, Image: img.Recipe, Created: time.Now().UTC(), Hosts: hosts,
	}, img)
	if err != nil {
		// nothing has booted far enough to be worth a look: roll back,
		// even when ctx was cancelled halfway through
		if derr := p.down(context.WithoutCancel(ctx), spec.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("rolling back: %w", derr))
		}
		return nil, err
	}
	log.Info(fmt.Sprintf("started %d guest(s) of fleet %s (%s, %d MiB, %d vCPU each) in %s; waiting for them, up to %s",
		len(f.Hosts), f.Name, accel.Name, mem, cpus, fleet.Since(start), timeout))
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitReady(wctx, f, log, start, nil); err != nil {
		// left up on purpose: a guest that does not come up is one worth
		// logging into or reading the console of
		return f, fmt.Errorf("fleet %q did not come up (it is left up for inspection; Down removes it): %w", f.Name, err)
	}
	log.Info(fmt.Sprintf("fleet %s up: %d guest(s) in %s; inventory %s", f.Name, len(f.Hosts), fleet.Since(start), f.InventoryPath))
	return f, nil
}

// create writes the fleet's keys and files and starts every guest.
func (p *Provider) create(ctx context.Context, dir string, st *vmState, img Image) (*fleet.Fleet, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var err error
	if st.SudoPassword, err = fleet.NewPassword(); err != nil {
		return nil, err
	}
	for i := range st.Hosts {
		if st.Hosts[i].SSHPort, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
		st.Hosts[i].SSHAddress = "127.0.0.1"
	}
	if err := backend.WriteState(dir, st); err != nil {
		return nil, err
	}
	f := fleetOf(dir, st)
	if err := fleet.NewFleetKey(f.KeyPath, st.Name); err != nil {
		return nil, err
	}
	loginKey, err := os.ReadFile(f.KeyPath + ".pub")
	if err != nil {
		return nil, err
	}
	var etcHosts [][2]string
	for _, h := range st.Hosts {
		etcHosts = append(etcHosts, [2]string{h.Address, h.Name})
	}
	keys := map[string][]ssh.PublicKey{}
	for i, h := range st.Hosts {
		id, pubs, err := p.identity(st, h, etcHosts, strings.TrimSpace(string(loginKey)))
		if err != nil {
			return nil, err
		}
		keys[h.Name] = pubs
		st.Hosts[i].HostKey = fleet.AuthorizedKey(pubs[0], "") // ed25519 comes first
		if err := startGuest(ctx, p.s.stateDir, st, i, id, img, pathsOf(dir, h.Name)); err != nil {
			return nil, err
		}
	}
	if err := backend.WriteState(dir, st); err != nil {
		return nil, err
	}
	f = fleetOf(dir, st)
	return f, fleet.WriteFleetFiles(f, keys)
}

// identity is what a guest's seed script writes: its cached host keys
// (the same for a fleet of that name every time, so known_hosts entries
// stay valid), the fleet's login key and every guest's address.
func (p *Provider) identity(st *vmState, h fleet.Host, etcHosts [][2]string, loginKey string) (identity, []ssh.PublicKey, error) {
	keyDir, err := fleet.EnsureHostKeys(p.s.cacheDir, st.Name, h.Name)
	if err != nil {
		return identity{}, nil, err
	}
	pubs, err := fleet.HostPublicKeys(keyDir)
	if err != nil {
		return identity{}, nil, err
	}
	id := identity{
		Hostname: h.Name, Address: h.Address, Hosts: etcHosts, HostKeys: map[string][]byte{},
		AuthorizedKey: loginKey, Users: []string{fleet.UserRoot, fleet.UserTester, fleet.UserSudoPassword},
		SudoUser: fleet.UserSudoPassword, SudoPassword: st.SudoPassword,
	}
	for _, t := range fleet.HostKeyTypes() {
		for _, n := range []string{"ssh_host_" + t + "_key", "ssh_host_" + t + "_key.pub"} {
			b, err := os.ReadFile(filepath.Join(keyDir, n))
			if err != nil {
				return identity{}, nil, err
			}
			id.HostKeys[n] = b
		}
	}
	return id, pubs, nil
}

// chooseOctet picks the third octet of the fleet's segment (10.73.X.0/24,
// multicast group 239.73.X.1): derived from the name, skipping the ones
// other microvm fleets of this state dir hold.
func (p *Provider) chooseOctet(name string) (int, error) {
	used := map[int]bool{}
	entries, _ := os.ReadDir(p.s.stateDir)
	for _, e := range entries {
		if e.IsDir() && e.Name() != name {
			if st, err := backend.ReadState[vmState](p.fleetDir(e.Name())); err == nil {
				used[st.Octet] = true
			}
		}
	}
	start := int(fnv32(name)%254) + 1
	for i := 0; i < 254; i++ {
		if o := (start-1+i)%254 + 1; !used[o] {
			return o, nil
		}
	}
	return 0, fmt.Errorf("fleet %q: every 10.73.X.0/24 is in use", name)
}
