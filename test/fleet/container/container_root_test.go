package container

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// newRootBackend returns a container backend whose fleets live in a
// temporary state dir, so a test never touches a developer's dev fleet; the
// rootfs cache is the shared one (building it again would cost minutes).
func newRootBackend(t *testing.T) *Container {
	t.Helper()
	requireRoot(t)
	c, err := NewContainer(fleet.Options{StateDir: t.TempDir(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// upForTest brings a fleet up and registers its Down, which runs even when
// the test fails (t.TempDir's own cleanup is registered earlier, so it runs
// after).
func upForTest(t *testing.T, c *Container, spec fleet.Spec) *fleet.Fleet {
	t.Helper()
	t.Cleanup(func() {
		if err := c.Down(context.Background(), spec.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // includes a first rootfs build
	defer cancel()
	f, err := c.Up(ctx, spec)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	return f
}

func run(t *testing.T, f *fleet.Fleet, host, user, cmd string) string {
	t.Helper()
	return runWithin(t, f, host, user, cmd, time.Minute)
}

// runWithin is run with its own bound, for work whose time grows with the
// machine's load (installing packages, starting a daemon): CI runs this
// suite beside builds and walks, and one minute was not enough for dpkg.
func runWithin(t *testing.T, f *fleet.Fleet, host, user, cmd string, bound time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	out, _, err := f.Run(ctx, host, user, cmd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return strings.TrimSpace(out)
}

// TestContainerFleet_Root brings up five hosts and checks, from inside each,
// what cargoship relies on a host to be; then tears the fleet down and
// checks nothing of it is left.
func TestContainerFleet_Root(t *testing.T) {
	c := newRootBackend(t)
	const name = "rtfleet"
	start := time.Now()
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 2, Worker: 2, Infra: 1})
	t.Logf("measured: 5 hosts up (ssh + systemd running) in %s", time.Since(start).Round(100*time.Millisecond))

	if len(f.Hosts) != 5 {
		t.Fatalf("%d hosts, want 5", len(f.Hosts))
	}
	ctx := context.Background()
	for _, h := range f.Hosts {
		t.Run("host/"+h.Name, func(t *testing.T) {
			if got := run(t, f, h.Name, fleet.UserRoot, "hostname"); got != h.Name {
				t.Errorf("hostname = %q, want %q", got, h.Name)
			}
			if got := run(t, f, h.Name, fleet.UserRoot, "ip -4 -o addr show dev eth0"); !strings.Contains(got, " "+h.Address+"/24 ") {
				t.Errorf("eth0 = %q, want %s/24", got, h.Address)
			}
			if got := run(t, f, h.Name, fleet.UserRoot, "systemctl is-system-running || systemctl --failed --no-legend"); got != "running" {
				t.Errorf("systemctl is-system-running = %q, want running", got)
			}
			if got := run(t, f, h.Name, fleet.UserTester, "sudo -n id -u"); got != "0" {
				t.Errorf("tester: sudo -n id -u = %q, want 0", got)
			}
			if _, stderr, err := f.Run(ctx, h.Name, fleet.UserSudoPassword, "sudo -n true"); err == nil {
				t.Error("sudopw: sudo -n succeeded; it must need a password")
			} else if !strings.Contains(stderr, "password is required") {
				t.Errorf("sudopw: sudo -n failed, but not for want of a password: %s", stderr)
			}
			out, _, err := f.RunInput(ctx, h.Name, fleet.UserSudoPassword, f.SudoPassword+"\n", "sudo -S -p '' id -u")
			if err != nil || strings.TrimSpace(out) != "0" {
				t.Errorf("sudopw: sudo -S with the fleet password: %q, %v", out, err)
			}
			if _, _, err := f.RunInput(ctx, h.Name, fleet.UserSudoPassword, "wrong-"+f.SudoPassword+"\n", "sudo -S -p '' id -u"); err == nil {
				t.Error("sudopw: sudo -S accepted a wrong password")
			}
		})
	}

	t.Run("nftables is per host", func(t *testing.T) {
		run(t, f, "kc0", fleet.UserRoot, "nft add table inet cstest && nft add chain inet cstest input '{ type filter hook input priority 0; }' && nft add rule inet cstest input tcp dport 9999 drop")
		if got := run(t, f, "kc0", fleet.UserRoot, "nft list table inet cstest"); !strings.Contains(got, "tcp dport 9999 drop") {
			t.Errorf("kc0 lost its rule: %s", got)
		}
		for _, h := range f.Hosts[1:] {
			if got := run(t, f, h.Name, fleet.UserRoot, "nft list tables"); strings.Contains(got, "cstest") {
				t.Errorf("%s sees kc0's table: %s", h.Name, got)
			}
		}
		if out, err := exec.Command("nft", "list", "tables").CombinedOutput(); err == nil && strings.Contains(string(out), "cstest") {
			t.Errorf("this machine sees kc0's table: %s", out)
		}
	})

	t.Run("tcp between hosts over the bridge", func(t *testing.T) {
		srv := f.Hosts[3] // kw1
		run(t, f, srv.Name, fleet.UserRoot, "systemd-run --unit=cstest-http --working-directory=/etc python3 -m http.server 8080 --bind "+srv.Address)
		// python3 takes a moment to listen; retry from the client for up to 10 s.
		got := run(t, f, "kc0", fleet.UserRoot, `for i in $(seq 50); do python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode().strip())' http://`+srv.Address+`:8080/hostname 2>/dev/null && exit 0; sleep 0.2; done; exit 1`)
		if got != srv.Name {
			t.Errorf("kc0 fetched %q from %s's /etc/hostname, want %q", got, srv.Name, srv.Name)
		}
		// And raw TCP with bash's /dev/tcp, to the other host's sshd.
		if got := run(t, f, "ki0", fleet.UserRoot, "timeout 5 bash -c 'exec 3<>/dev/tcp/"+f.Hosts[0].Address+"/22; head -c 7 <&3'"); got != "SSH-2.0" {
			t.Errorf("ki0 -> kc0:22 banner = %q", got)
		}
	})

	t.Run("inventory and known_hosts", func(t *testing.T) {
		b, err := os.ReadFile(f.InventoryPath)
		if err != nil {
			t.Fatal(err)
		}
		// read with cargoship's own loader, the one `cargoship apply
		// --config` uses: anything it rejects fails here
		inv, _, err := v1alpha1.ParseCluster("inventory.yaml", b)
		if err != nil {
			t.Fatalf("cargoship rejects the inventory: %v\n%s", err, b)
		}
		for i, h := range inv.Spec.Hosts {
			if h.Hostname != f.Hosts[i].Name || h.SSH.Address != f.Hosts[i].Address || h.SSH.KeyPath != f.KeyPath {
				t.Errorf("inventory host %d = %+v", i, h)
			}
		}
		// OpenSSH with strict host key checking against the fleet's known_hosts.
		args := append(fleet.SSHArgs(f, f.Hosts[4], fleet.UserRoot)[1:], "-o", "BatchMode=yes", "hostname")
		out, err := exec.Command("ssh", args...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != f.Hosts[4].Name {
			t.Errorf("ssh %s: %q %v", strings.Join(args, " "), out, err)
		}
	})

	t.Run("reboot comes back", func(t *testing.T) {
		h := f.Hosts[4]
		before := run(t, f, h.Name, fleet.UserRoot, "cat /proc/sys/kernel/random/boot_id")
		_, _, _ = f.Run(ctx, h.Name, fleet.UserRoot, "systemctl reboot")
		rebootStart := time.Now()
		deadline := time.Now().Add(60 * time.Second)
		for {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			out, _, err := f.Run(cctx, h.Name, fleet.UserRoot, "systemctl is-system-running; cat /proc/sys/kernel/random/boot_id")
			cancel()
			if fields := strings.Fields(out); err == nil && len(fields) == 2 && fields[0] == "running" && fields[1] != before {
				t.Logf("measured: %s rebooted and running again in %s", h.Name, time.Since(rebootStart).Round(100*time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not come back from reboot within 60s (last: %q %v); inside:\n%s", h.Name, out, err, diagnoseHost(f.Name, h.Name))
			}
			time.Sleep(250 * time.Millisecond)
		}
	})

	dir := f.Dir
	downStart := time.Now()
	if err := c.Down(ctx, name); err != nil {
		t.Fatalf("Down: %v", err)
	}
	t.Logf("measured: 5 hosts down in %s", time.Since(downStart).Round(100*time.Millisecond))
	assertNothingLeft(t, c, name, dir)
	if err := c.Down(ctx, name); err != nil {
		t.Fatalf("second Down: %v", err)
	}
	assertNothingLeft(t, c, name, dir)
}

// assertNothingLeft checks that no process, mount, namespace, link or state
// of a fleet exists.
func assertNothingLeft(t *testing.T, c *Container, name, dir string) {
	t.Helper()
	if ps := fleetProcs(name); len(ps) > 0 {
		t.Errorf("processes left: %+v", ps)
	}
	if ms, _ := mountsUnder(dir); len(ms) > 0 {
		t.Errorf("mounts left: %v", ms)
	}
	if ns := listNetns(netnsPrefix(name)); len(ns) > 0 {
		t.Errorf("network namespaces left: %v", ns)
	}
	if cg := fleetCgroups(name); len(cg) > 0 {
		t.Errorf("cgroups left: %v", cg)
	}
	ctx := context.Background()
	if ls, _ := listLinks(ctx, vethPrefix(name)); len(ls) > 0 {
		t.Errorf("veths left: %v", ls)
	}
	if linkExists(ctx, bridgeName(name)) {
		t.Errorf("bridge %s left", bridgeName(name))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("fleet dir %s left (%v)", dir, err)
	}
	if ms, _ := filepath.Glob("/run/systemd/nspawn/propagate/" + netnsPrefix(name) + "*"); len(ms) > 0 {
		t.Errorf("nspawn runtime dirs left: %v", ms)
	}
	if found := c.leftovers(ctx, name); len(found) > 0 {
		t.Errorf("leftovers: %v", found)
	}
	if st, _ := c.List(ctx); len(st) > 0 {
		for _, s := range st {
			if s.Name == name {
				t.Errorf("List still shows the fleet: %+v", s)
			}
		}
	}
}

// TestContainerFleetRefusesAFleetAlreadyUp_Root: a second Up of a name that is
// up is refused with a message that says what to do, and leaves the running
// fleet alone.
func TestContainerFleetRefusesAFleetAlreadyUp_Root(t *testing.T) {
	c := newRootBackend(t)
	const name = "rtrefuse"
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 1, Image: ImageBase})
	_, err := c.Up(context.Background(), fleet.Spec{Name: name, Control: 1, Image: ImageBase})
	if err == nil {
		t.Fatal("second Up of a fleet that is up succeeded")
	}
	for _, want := range []string{`fleet "rtrefuse" is already up`, "run Down first"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if got := run(t, f, "kc0", fleet.UserRoot, "systemctl is-system-running"); got != "running" {
		t.Errorf("after the refused Up, kc0 is %q", got)
	}
	// The base image has the fleet's tools but none of the extra packages.
	if _, _, err := f.Run(context.Background(), "kc0", fleet.UserRoot, "command -v firewalld"); err == nil {
		t.Error("base image host has firewalld")
	}
	got, err := c.Get(context.Background(), name)
	if err != nil || got.SudoPassword != f.SudoPassword || len(got.Hosts) != 1 {
		t.Errorf("Get = %+v, %v", got, err)
	}
}

// TestContainerFleetDownAfterCrash_Root: a run that died leaving its hosts'
// processes, mounts and network behind, with its state file and pid files
// gone, is still cleaned up by Down, which finds everything by name.
func TestContainerFleetDownAfterCrash_Root(t *testing.T) {
	c := newRootBackend(t)
	const name = "rtcrash"
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 1, Worker: 1, Image: ImageBase})
	// The crash: the supervisor loops die without a poweroff, and the state
	// is half gone.
	for _, p := range fleetProcs(name) {
		if p.Comm != "systemd-nspawn" {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	if err := os.Remove(filepath.Join(f.Dir, backend.StateFile)); err != nil {
		t.Fatal(err)
	}
	pids, _ := filepath.Glob(filepath.Join(f.Dir, hostsDir, "*", "pid"))
	for _, p := range pids {
		os.Remove(p)
	}
	if found := c.leftovers(context.Background(), name); len(found) == 0 {
		t.Fatal("the crashed fleet's leftovers are not seen")
	}
	st, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, s := range st {
		listed = listed || (s.Name == name && len(s.Problems) > 0)
	}
	if !listed {
		t.Errorf("List does not report the crashed fleet's leftovers: %+v", st)
	}
	if _, err := c.Up(context.Background(), fleet.Spec{Name: name, Control: 1, Image: ImageBase}); err == nil || !strings.Contains(err.Error(), "already up") {
		t.Errorf("Up over a crashed fleet's leftovers: %v; want a refusal", err)
	}
	if err := c.Down(context.Background(), name); err != nil {
		t.Fatalf("Down after crash: %v", err)
	}
	assertNothingLeft(t, c, name, f.Dir)
}
