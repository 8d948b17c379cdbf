package firewall

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// TestFirewallFrontEndsInOnePythonStart_Root checks, on a real container
// fleet host, what cargoship does to spare firewall-cmd's and ufw's Python
// starts: both are detected stopped and started; the same ufw change made
// in one Python process and in separate runs gives the same rules;
// firewalld read over D-Bus and through firewall-cmd gives the same
// configuration after cargoship's Apply plus an admin's own source and
// rich rule; and the same firewalld change made in one batch and in
// separate runs gives the same result, applied and removed. It needs root and the
// fleet image.
func TestFirewallFrontEndsInOnePythonStart_Root(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: brings up a container fleet host (run as root, or ./hack/test.sh unit)")
	}
	// It mostly waits on the host's firewalld: beside the package's other tests.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a first fleet image build included
	defer cancel()
	c, err := container.NewContainer(fleet.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	spec := fleet.Spec{Name: "fwdbus", Control: 1}
	t.Cleanup(func() {
		if err := c.Down(context.Background(), spec.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	f, err := c.Up(ctx, spec)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	inv, _, err := v1alpha1.LoadClusterFile(f.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := host.Connect(ctx, &inv.Spec.Hosts[0], host.ConnectOptions{KnownHostsPath: f.KnownHostsPath})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	root := func(cmd string) {
		t.Helper()
		if _, stderr, err := f.Run(ctx, "kc0", fleet.UserRoot, cmd); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, stderr)
		}
	}
	detect := func(fw Firewall, wantActive bool) {
		t.Helper()
		present, active, err := fw.Detect(ctx, conn)
		if err != nil || !present || active != wantActive {
			t.Errorf("%s: present=%v active=%v, %v; want present, active=%v", fw.Name(), present, active, err, wantActive)
		}
	}
	// Installed and stopped, both are answered without their Python
	// front ends; started, they are asked.
	detect(Firewalld{}, false)
	detect(UFW{}, false)
	root("ufw allow 22/tcp >/dev/null && ufw --force enable >/dev/null")
	detect(UFW{}, true)
	compareUFWRuns(ctx, t, conn, Desired{
		Peers: []string{"10.78.112.12", "fd00:78::12"},
		CIDRs: []string{"10.42.0.0/16"},
		Ports: []v1alpha1.Port{{Port: "6443"}, {Port: "8472", Protocol: "udp"}},
		Rules: []v1alpha1.FirewallRule{{Source: "192.0.2.0/24", Port: "10250", Protocol: "tcp", Action: "reject"}},
	})
	root("ufw --force disable >/dev/null")
	detect(UFW{}, false)
	root("systemctl start firewalld && firewall-cmd --state")
	detect(Firewalld{}, true)

	fw := Firewalld{}
	cmd := fw
	cmd.viaFirewallCmd = true
	checkBatch(ctx, t, conn)

	d := Desired{
		Peers:     []string{"10.78.112.12", "10.78.112.13", "fd00:78::12"},
		CIDRs:     []string{"10.42.0.0/16", "10.43.0.0/16", "fd00:42::/56"},
		Ports:     []v1alpha1.Port{{Port: "6443"}, {Port: "30000-32767"}, {Port: "8472", Protocol: "udp"}},
		Rules:     []v1alpha1.FirewallRule{{Source: "192.0.2.0/24", Port: "10250", Protocol: "tcp", Action: "reject"}},
		Interface: "eth0",
	}
	// The same change made by separate firewall-cmd runs and by one batch
	// leaves the same configuration.
	if _, err := cmd.Apply(ctx, conn, d); err != nil {
		t.Fatalf("Apply through firewall-cmd: %v", err)
	}
	bySeparateRuns := readAll(ctx, t, conn, fw)
	if _, err := cmd.Remove(ctx, conn); err != nil {
		t.Fatalf("Remove through firewall-cmd: %v", err)
	}
	removedBySeparateRuns := readAll(ctx, t, conn, fw)
	if _, err := fw.Apply(ctx, conn, d); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := readAll(ctx, t, conn, fw); !reflect.DeepEqual(got, bySeparateRuns) {
		t.Errorf("Apply in one batch and in separate firewall-cmd runs differ:\nbatch:    %+v\nseparate: %+v", got, bySeparateRuns)
	}
	// an admin's own source and rich rule, which the readers must see alike
	root(`firewall-cmd --permanent --zone=internal --add-source=198.51.100.0/24 && firewall-cmd --permanent --zone=internal --add-rich-rule='rule family="ipv4" source address="203.0.113.9" drop' && firewall-cmd --reload`)
	compareReaders(ctx, t, conn, fw, "applied")
	again, err := fw.Plan(ctx, conn, d)
	if err != nil || again.Changed() {
		t.Errorf("a plan read over D-Bus after Apply: changed=%v, %v: %+v", again.Changed(), err, again.Actions)
	}

	if _, err := fw.Remove(ctx, conn); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	// the admin's change undone, so what is left is what Remove left
	root(`firewall-cmd --permanent --zone=internal --remove-source=198.51.100.0/24 && firewall-cmd --permanent --zone=internal --remove-rich-rule='rule family="ipv4" source address="203.0.113.9" drop' && firewall-cmd --reload`)
	if got := readAll(ctx, t, conn, fw); !reflect.DeepEqual(got, removedBySeparateRuns) {
		t.Errorf("Remove in one batch and in separate firewall-cmd runs differ:\nbatch:    %+v\nseparate: %+v", got, removedBySeparateRuns)
	}
}

// readAll is firewalld's whole configuration as the plan and reset read it.
func readAll(ctx context.Context, t *testing.T, r host.Runner, fw Firewalld) []any {
	t.Helper()
	p, err := readFirewalldPlan(ctx, r, fw, "eth0", fw.statePath())
	if err != nil {
		t.Fatal(err)
	}
	perm, err := readFirewalldOwn(ctx, r, fw, true, true, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := readFirewalldOwn(ctx, r, fw, false, true, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	return []any{normalPlan(p), normalOwn(perm), normalOwn(run)}
}

// checkBatch: the batch runs in firewall-cmd's interpreter, not the
// fallback, prints what each call prints, and stops at the first that
// fails with its exit code (INVALID_ZONE, 112).
func checkBatch(ctx context.Context, t *testing.T, r host.Runner) {
	t.Helper()
	calls := `[["--get-default-zone"], ["--zone=nosuchzone", "--list-all"], ["--state"]]`
	out, err := r.Sudo(ctx, host.Script(pythonBatchScript+"echo fell back", pythonBatch, calls, "firewall-cmd"))
	var exit *host.ExitError
	if !errors.As(err, &exit) || exit.Code != 112 || strings.TrimSpace(out) != "public" {
		t.Errorf("batch: out %q, err %v; want public, then INVALID_ZONE (112) and nothing after", out, err)
	}
	if _, err := r.Sudo(ctx, host.Script(pythonBatchScript+"echo fell back", pythonBatch, `[["--state"]]`, "firewall-cmd")); err != nil {
		t.Errorf("batch of one: %v", err)
	}
}

// compareReaders reads firewalld over D-Bus and through firewall-cmd and
// reports every difference; it fails when the D-Bus reader did not run.
func compareReaders(ctx context.Context, t *testing.T, r host.Runner, fw Firewalld, when string) {
	t.Helper()
	out, err := r.Sudo(ctx, host.Script(firewalldPlanRead, append([]string{dbusProgram(fw), "eth0", fw.statePath()}, ourIPSets...)...))
	if err != nil || !strings.HasPrefix(out, "@@dbus {") {
		t.Fatalf("%s: the D-Bus reader did not answer: %v: %.300q", when, err, out)
	}
	cmd := fw
	cmd.viaFirewallCmd = true
	ifaces := []string{"eth0"}
	if when == "applied" {
		ifaces = append(ifaces, "") // the default zone's, as a host whose interface is in none
	}
	for _, iface := range ifaces {
		viaDBus, err1 := readFirewalldPlan(ctx, r, fw, iface, fw.statePath())
		viaCmd, err2 := readFirewalldPlan(ctx, r, cmd, iface, fw.statePath())
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: plan reads: %v; %v", when, err1, err2)
		}
		if !reflect.DeepEqual(normalPlan(viaDBus), normalPlan(viaCmd)) {
			t.Errorf("%s, interface %q: the plan reads differ:\nD-Bus:        %+v\nfirewall-cmd: %+v", when, iface, viaDBus, viaCmd)
		}
	}
	// All of it: what a removed peer reads (the ipsets alone) is part.
	for _, permanent := range []bool{true, false} {
		viaDBus, err1 := readFirewalldOwn(ctx, r, fw, permanent, true, []string{"public", "internal"})
		viaCmd, err2 := readFirewalldOwn(ctx, r, cmd, permanent, true, []string{"public", "internal"})
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: own reads: %v; %v", when, err1, err2)
		}
		if !reflect.DeepEqual(normalOwn(viaDBus), normalOwn(viaCmd)) {
			t.Errorf("%s, permanent=%v: the reads differ:\nD-Bus:        %+v\nfirewall-cmd: %+v", when, permanent, viaDBus, viaCmd)
		}
	}
}

// normal makes an empty list and a missing one the same, and sorts: the
// readers agree on contents, not on how an empty answer is spelt.
func normal(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	l = slices.Clone(l)
	slices.Sort(l)
	return l
}

func normalMap(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		if v = normal(v); v != nil {
			out[k] = v
		}
	}
	return out
}

func normalState(s fwState) fwState {
	s.entries = normalMap(s.entries)
	s.trusted, s.ports, s.zoneServices, s.rich = normal(s.trusted), normal(s.ports), normal(s.zoneServices), normal(s.rich)
	return s
}

func normalPlan(p fwPlanState) fwPlanState {
	p.perm, p.run = normalState(p.perm), normalState(p.run)
	return p
}

func normalOwn(o fwOwn) fwOwn {
	o.entries, o.sources, o.zoneServices, o.rich = normalMap(o.entries), normalMap(o.sources), normalMap(o.zoneServices), normalMap(o.rich)
	return o
}

// compareUFWRuns makes d's rules on an active ufw in one Python process
// and in separate ufw runs, and wants the same rules from both; then
// Remove leaves none of cargoship's either way.
func compareUFWRuns(ctx context.Context, t *testing.T, r host.Runner, d Desired) {
	t.Helper()
	out, err := r.Sudo(ctx, host.Script(pythonBatchScript+"echo fell back", pythonBatch, `[["status"], ["show", "added"]]`, "ufw"))
	if err != nil || !strings.HasPrefix(out, "Status: active") || strings.Contains(out, "fell back") || !strings.Contains(out, "ufw allow 22/tcp") {
		t.Errorf("ufw batch: %v\n%s", err, out)
	}
	var added [2]string
	for i, u := range []UFW{{separateRuns: true}, {}} {
		p, err := u.Apply(ctx, r, d)
		if err != nil || !p.Changed() {
			t.Fatalf("ufw Apply (separate runs %v): changed=%v, %v", u.separateRuns, p.Changed(), err)
		}
		if added[i], err = r.Sudo(ctx, "LC_ALL=C ufw show added"); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Remove(ctx, r); err != nil {
			t.Fatalf("ufw Remove (separate runs %v): %v", u.separateRuns, err)
		}
		left, err := r.Sudo(ctx, "LC_ALL=C ufw show added")
		if err != nil || strings.Contains(left, ufwTag) {
			t.Errorf("ufw Remove (separate runs %v) left cargoship's rules: %v\n%s", u.separateRuns, err, left)
		}
	}
	if added[0] != added[1] || !strings.Contains(added[1], "prepend") && !strings.Contains(added[1], "reject") {
		t.Errorf("ufw rules made in separate runs and in one process differ, or lack the reject:\nseparate:\n%s\none process:\n%s", added[0], added[1])
	}
}
