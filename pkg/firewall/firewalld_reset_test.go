package firewall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// forgotten are the peers of cluster that leave it in these tests, and
// smaller is cluster without them.
var forgotten = []string{"10.73.0.12", "fd00::12"}

func smaller() Desired {
	d := cluster
	d.Peers = []string{"10.73.0.11"}
	return d
}

// confString renders a firewalld configuration sorted, nil and empty
// lists alike, so two configurations compare as text.
func confString(c fwConf) string {
	var b strings.Builder
	for _, n := range sortedKeys(c.IPSets) {
		s := c.IPSets[n]
		fmt.Fprintf(&b, "ipset %s %s %s %q\n", n, s.Type, s.Family, sorted(s.Entries))
	}
	for _, n := range sortedKeys(c.Services) {
		fmt.Fprintf(&b, "service %s %q\n", n, sorted(c.Services[n]))
	}
	for _, n := range sortedKeys(c.Zones) {
		z := c.Zones[n]
		fmt.Fprintf(&b, "zone %s sources %q services %q rich %q ports %q\n", n, sorted(z.Sources), sorted(z.Services), sorted(z.Rich), sorted(z.Ports))
	}
	return b.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	return s
}

// adminFirewalld is firewalld as an admin configured it before cargoship
// came: a port, a service, a source and a rich rule of their own, and an
// ipset of their own.
func adminFirewalld() *fakeFirewalld {
	f := newFakeFirewalld()
	f.Perm.Zones["public"].Ports = []string{"8080/tcp"}
	f.Perm.Zones["internal"].Services = append(f.Perm.Zones["internal"].Services, "kubelet")
	f.Perm.Zones["internal"].Rich = []string{`rule family="ipv4" source address="192.0.2.0/24" service name="ssh" accept`}
	f.Perm.Zones["trusted"].Sources = []string{"192.0.2.7", "ipset:admin"}
	f.Perm.IPSets["admin"] = &fwIPSet{Type: "hash:ip", Family: "inet", Entries: []string{"10.73.0.12"}}
	f.Run = clone(f.Perm)
	return f
}

// TestFirewalldForgetIsApplyWithoutThePeers: forgetting two peers on one
// host leaves firewalld exactly as applying the smaller fleet leaves
// another, permanent and runtime; the smaller fleet's Plan is then empty,
// the dry run changed nothing, and a second Forget does nothing. The
// admin's ipset holding the same address is not touched.
func TestFirewalldForgetIsApplyWithoutThePeers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := cluster
	d.Interface = "eth1"
	less := smaller()
	less.Interface = "eth1"
	var hosts [2]*fakeHost
	var fws [2]Firewalld
	for i := range hosts {
		hosts[i] = newFakeHost(t, &fakeState{Firewalld: adminFirewalld()})
		fws[i] = Firewalld{StatePath: filepath.Join(t.TempDir(), "rich"), ConfigDir: t.TempDir(), DefaultsDir: t.TempDir()}
		if _, err := fws[i].Apply(ctx, hosts[i], d); err != nil {
			t.Fatal(err)
		}
	}
	forgot, applied := hosts[0], hosts[1]
	n := len(mutating(forgot.load(t).Calls))
	plan, err := fws[0].PlanForget(ctx, forgot, forgotten)
	if err != nil {
		t.Fatal(err)
	}
	if m := mutating(forgot.load(t).Calls); len(m) != n {
		t.Fatalf("PlanForget changed firewalld: %q", m[n:])
	}
	var cmds []string
	for _, a := range plan.Actions {
		cmds = append(cmds, a.Command)
	}
	want := "firewall-cmd --permanent --ipset=k8s-nodes --remove-entry=10.73.0.12\n" +
		"firewall-cmd --permanent --ipset=k8s-nodes6 --remove-entry=fd00::12\n" +
		"firewall-cmd --reload"
	if strings.Join(cmds, "\n") != want {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(cmds, "\n"), want)
	}
	if _, err := fws[0].Forget(ctx, forgot, forgotten); err != nil {
		t.Fatal(err)
	}
	if _, err := fws[1].Apply(ctx, applied, less); err != nil {
		t.Fatal(err)
	}
	a, b := forgot.load(t).Firewalld, applied.load(t).Firewalld
	if confString(a.Perm) != confString(b.Perm) || confString(a.Run) != confString(b.Run) {
		t.Errorf("after Forget:\n%s\nafter Apply of the smaller fleet:\n%s", confString(a.Perm), confString(b.Perm))
	}
	if got := a.Run.IPSets["admin"].Entries; !slices.Equal(got, []string{"10.73.0.12"}) {
		t.Errorf("the admin's ipset = %q", got)
	}
	if p, err := fws[0].Plan(ctx, forgot, less); err != nil || p.Changed() {
		t.Errorf("Plan of the smaller fleet after Forget = %+v %v", p.Actions, err)
	}
	if again, err := fws[0].Forget(ctx, forgot, forgotten); err != nil || again.Changed() {
		t.Errorf("second Forget = %+v %v", again, err)
	}

	// A Forget whose reload never happened is finished by the next one.
	st := forgot.load(t)
	st.Firewalld.Run.IPSets[IPSetNodes].Entries = append(st.Firewalld.Run.IPSets[IPSetNodes].Entries, "10.73.0.12")
	forgot.save(t, st)
	if p, err := fws[0].Forget(ctx, forgot, forgotten); err != nil || len(p.Actions) != 1 || p.Actions[0].Command != "firewall-cmd --reload" {
		t.Errorf("Forget with the runtime behind = %+v %v", p, err)
	}
}

// TestFirewalldRemoveLeavesTheAdminsConfiguration: after Remove firewalld
// is exactly as the admin had it before cargoship's Apply, permanent and
// runtime; the record of rich rules is gone; a second Remove does nothing.
func TestFirewalldRemoveLeavesTheAdminsConfiguration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	before := adminFirewalld()
	h := newFakeHost(t, &fakeState{Firewalld: adminFirewalld()})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich"), ConfigDir: t.TempDir(), DefaultsDir: t.TempDir()}
	d := cluster
	d.Interface = "eth1"
	if _, err := fw.Apply(ctx, h, d); err != nil {
		t.Fatal(err)
	}
	// The service enabled in a second zone too (an earlier interface).
	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	n := len(mutating(h.load(t).Calls))
	plan, err := fw.PlanRemove(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if m := mutating(h.load(t).Calls); len(m) != n {
		t.Fatalf("PlanRemove changed firewalld: %q", m[n:])
	}
	var summaries []string
	for _, a := range plan.Actions {
		summaries = append(summaries, a.Summary)
	}
	for _, want := range []string{
		"stop trusting ipset k8s-nodes in zone trusted", "disable service cargoship in zone internal",
		"disable service cargoship in zone public", "delete ipset k8s-subnets", "delete service cargoship and the ports it opens",
		"make the permanent configuration live", "remove " + fw.StatePath,
	} {
		if !slices.Contains(summaries, want) {
			t.Errorf("plan lacks %q:\n%s", want, strings.Join(summaries, "\n"))
		}
	}
	if _, err := fw.Remove(ctx, h); err != nil {
		t.Fatal(err)
	}
	got := h.load(t).Firewalld
	if confString(got.Perm) != confString(before.Perm) || confString(got.Run) != confString(before.Run) {
		t.Errorf("after Remove:\n%s\nbefore cargoship:\n%s", confString(got.Perm), confString(before.Perm))
	}
	if _, err := os.Stat(fw.StatePath); !os.IsNotExist(err) {
		t.Errorf("the rich rule record is still there: %v", err)
	}
	if again, err := fw.Remove(ctx, h); err != nil || again.Changed() {
		t.Errorf("second Remove = %+v %v", again, err)
	}

	// A Remove whose reload never happened: only the reload is due.
	st := h.load(t)
	st.Firewalld.Run.IPSets[IPSetNodes] = &fwIPSet{Type: "hash:ip", Family: "inet"}
	h.save(t, st)
	if p, err := fw.PlanRemove(ctx, h); err != nil || len(p.Actions) != 1 || p.Actions[0].Command != "firewall-cmd --reload" {
		t.Errorf("PlanRemove with the runtime behind = %+v %v", p, err)
	}
}

// TestFirewalldResetWithoutADaemon: no firewalld is nothing to do; a
// stopped one is a warning, never started.
func TestFirewalldResetWithoutADaemon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	absent := (&hosttest.Fake{Strict: true}).On("command -v firewall-cmd", "absent\n")
	if p, err := (Firewalld{}).Remove(ctx, absent); err != nil || p.Changed() || len(p.Warnings) != 0 {
		t.Errorf("no firewalld: %+v %v", p, err)
	}
	if p, err := (Firewalld{}).Forget(ctx, absent, forgotten); err != nil || p.Changed() {
		t.Errorf("no firewalld: %+v %v", p, err)
	}
	fake := newFakeFirewalld()
	fake.Running = false
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	for _, run := range []func() (Plan, error){
		func() (Plan, error) { return Firewalld{}.Remove(ctx, h) },
		func() (Plan, error) { return Firewalld{}.Forget(ctx, h, forgotten) },
	} {
		if p, err := run(); err != nil || p.Changed() || len(p.Warnings) != 1 {
			t.Errorf("stopped firewalld: %+v %v", p, err)
		}
	}
	if calls := h.load(t).Calls; len(calls) != 2 || strings.Join(calls[0], " ") != "firewall-cmd --state" {
		t.Errorf("calls = %q", calls)
	}
}
