package firewall

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// mutating reports firewall-cmd calls that change something.
func mutating(calls [][]string) []string {
	var out []string
	for _, c := range calls {
		line := strings.Join(c, " ")
		if c[0] != "firewall-cmd" {
			continue
		}
		for _, op := range []string{"--new-", "--add-", "--remove-", "--reload"} {
			if strings.Contains(line, op) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

func TestRichRuleCanonical(t *testing.T) {
	s, err := normalize(Desired{Rules: []v1alpha1.FirewallRule{
		{Source: "10.0.0.0/8", Port: "10250", Protocol: "tcp"},
		{Source: "fd00::1", Action: "reject"},
		{Port: "30000-32767", Protocol: "udp", Action: "drop"},
		{Source: "10.1.2.3/16"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`rule family="ipv4" source address="10.0.0.0/8" port port="10250" protocol="tcp" accept`,
		`rule family="ipv6" source address="fd00::1" reject`,
		`rule port port="30000-32767" protocol="udp" drop`,
		`rule family="ipv4" source address="10.1.0.0/16" accept`,
	}
	for i, r := range s.rules {
		if got := richRule(r); got != want[i] {
			t.Errorf("rule %d: %s\nwant     %s", i, got, want[i])
		}
	}
}

func TestFirewalldApplyTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{Firewalld: newFakeFirewalld()})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}

	plan, err := fw.Plan(ctx, h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if m := mutating(h.load(t).Calls); len(m) != 0 {
		t.Fatalf("Plan changed firewalld: %q", m)
	}
	var summaries []string
	for _, a := range plan.Actions {
		summaries = append(summaries, a.Summary)
	}
	for _, want := range []string{
		"create ipset k8s-nodes", "add 10.73.0.11 to ipset k8s-nodes", "create ipset k8s-nodes6",
		"create ipset k8s-subnets", "trust ipset k8s-subnets in zone trusted",
		"create service cargoship", "open 30000-32767/tcp in service cargoship", "open 8472/udp in service cargoship",
		"enable service cargoship in zone public",
		`add rich rule rule family="ipv4" source address="192.168.10.0/24" port port="10250" protocol="tcp" accept to zone public`,
		"make the permanent configuration live",
	} {
		if !slices.Contains(summaries, want) {
			t.Errorf("plan lacks %q:\n%s", want, strings.Join(summaries, "\n"))
		}
	}
	if slices.Contains(summaries, "create ipset k8s-subnets6") {
		t.Error("no IPv6 networks: no k8s-subnets6")
	}

	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	st := h.load(t)
	f := st.Firewalld
	for _, c := range []fwConf{f.Perm, f.Run} { // reloaded: runtime equals permanent
		if got := c.IPSets[IPSetNodes]; got == nil || strings.Join(got.Entries, " ") != "10.73.0.11 10.73.0.12" || got.Type != "hash:ip" {
			t.Errorf("k8s-nodes = %+v", got)
		}
		if got := c.IPSets[IPSetNodes6]; got == nil || got.Family != "inet6" {
			t.Errorf("k8s-nodes6 = %+v", got)
		}
		if got := c.IPSets[IPSetSubnets]; got == nil || strings.Join(got.Entries, " ") != "10.42.0.0/16 10.43.0.0/16" || got.Type != "hash:net" {
			t.Errorf("k8s-subnets = %+v", got)
		}
		if got := c.Zones["trusted"].Sources; strings.Join(got, " ") != "ipset:k8s-nodes ipset:k8s-nodes6 ipset:k8s-subnets" {
			t.Errorf("trusted sources = %q", got)
		}
		if got := c.Services[FirewalldServ]; strings.Join(got, " ") != "6443/tcp 30000-32767/tcp 8472/udp" {
			t.Errorf("service ports = %q", got)
		}
		if !slices.Contains(c.Zones["public"].Services, FirewalldServ) || len(c.Zones["public"].Rich) != 2 {
			t.Errorf("public zone = %+v", c.Zones["public"])
		}
	}
	n := len(mutating(st.Calls))

	second, err := fw.Apply(ctx, h, cluster)
	if err != nil || second.Changed() {
		t.Errorf("second apply = %+v %v", second, err)
	}
	if m := mutating(h.load(t).Calls); len(m) != n {
		t.Errorf("second apply changed firewalld: %q", m[n:])
	}
}

// TestFirewalldRuntimeDrift is the host the earlier tool left: a correct
// permanent configuration that was never reloaded. Only a reload is due.
func TestFirewalldRuntimeDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{Firewalld: newFakeFirewalld()})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	st := h.load(t)
	st.Firewalld.Run = newFakeFirewalld().Run
	h.save(t, st)
	plan, err := fw.Plan(ctx, h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) != 1 || plan.Actions[0].Command != "firewall-cmd --reload" {
		t.Errorf("plan = %+v", plan.Actions)
	}
	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	if got := h.load(t).Firewalld.Run.IPSets[IPSetNodes]; got == nil || len(got.Entries) != 2 {
		t.Errorf("runtime after reload: %+v", got)
	}
}

// TestFirewalldRemovesOnlyItsOwn: a peer and a rule leave the document;
// their entries go, the admin's rich rule and ports stay.
func TestFirewalldRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := newFakeFirewalld()
	admin := `rule family="ipv4" source address="192.0.2.0/24" service name="ssh" accept`
	fake.Perm.Zones["internal"].Rich = []string{admin}
	fake.Run = clone(fake.Perm)
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	d := cluster
	d.Interface = "eth1" // in zone internal
	if _, err := fw.Apply(ctx, h, d); err != nil {
		t.Fatal(err)
	}
	if z := h.load(t).Firewalld.Perm.Zones["internal"]; !slices.Contains(z.Services, FirewalldServ) || len(z.Rich) != 3 {
		t.Fatalf("zone of eth1 = %+v", z)
	}
	d.Peers = []string{"10.73.0.11"}
	d.Rules = d.Rules[:1]
	d.Ports = d.Ports[:2]
	plan, err := fw.Apply(ctx, h, d)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, a := range plan.Actions {
		cmds = append(cmds, a.Command)
	}
	all := strings.Join(cmds, "\n")
	for _, want := range []string{
		"--ipset=k8s-nodes --remove-entry=10.73.0.12",
		"--ipset=k8s-nodes6 --remove-entry=fd00::12",
		"--service=cargoship --remove-port=8472/udp",
		`--zone=internal '--remove-rich-rule=rule port port="23" protocol="tcp" drop'`,
		"firewall-cmd --reload",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	z := h.load(t).Firewalld.Run.Zones["internal"]
	if !slices.Contains(z.Rich, admin) || len(z.Rich) != 2 {
		t.Errorf("rich rules after removal = %q", z.Rich)
	}
	if again, err := fw.Apply(ctx, h, d); err != nil || again.Changed() {
		t.Errorf("third apply = %+v %v", again, err)
	}
}

func TestFirewalldNotRunning(t *testing.T) {
	t.Parallel()
	fake := newFakeFirewalld()
	fake.Running = false
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	present, active, err := Firewalld{}.Detect(context.Background(), h)
	if err != nil || !present || active {
		t.Errorf("Detect = %v %v %v", present, active, err)
	}
	if _, err := (Firewalld{}).Apply(context.Background(), h, cluster); err == nil {
		t.Error("Apply without a running firewalld should fail")
	}
}

// TestFirewalldAsksTwiceConverged: after the detection, which found
// firewalld running, a converged host is read in one script (the zone,
// the permanent and runtime configuration, the rich-rule record) and
// nothing else is asked; the detection's word serves one Apply only.
func TestFirewalldAsksTwiceConverged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{Firewalld: newFakeFirewalld()})
	record := filepath.Join(t.TempDir(), "rich")
	walk := func() (Plan, int) {
		counting := &hosttest.Fake{Else: h.Local}
		found, err := DetectAll(ctx, counting)
		if err != nil {
			t.Fatal(err)
		}
		chosen, err := Choose(hostos.OS{Family: v1alpha1.FamilyEnterpriseLinux}, found)
		fw, ok := chosen.(Firewalld)
		if err != nil || !ok {
			t.Fatalf("Choose = %v, %v", chosen, err)
		}
		fw.StatePath = record
		p, err := fw.Apply(ctx, counting, cluster)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Apply(ctx, &hosttest.Fake{Strict: true}, cluster); err == nil {
			t.Error("a second Apply must ask whether firewalld runs, not reuse the detection's word")
		}
		return p, len(counting.Calls())
	}
	cold, trips := walk()
	if !cold.Changed() {
		t.Fatal("cold: nothing to change")
	}
	t.Logf("cold: %d round trips", trips)
	again, trips := walk()
	if again.Changed() || trips != 2 {
		t.Errorf("converged: changed=%v in %d round trips; want nothing in 2 (the detection, one read): %+v", again.Changed(), trips, again.Actions)
	}
}

// TestParseFirewalldPlanKeepsTheRecordExact: the record is taken by its
// size, so a missing final newline or a blank line survives, and a size
// that does not match is an error.
func TestParseFirewalldPlanKeepsTheRecordExact(t *testing.T) {
	head := "@@zone public\n@@part permanent\n@@ipsets\nk8s-nodes\n@@part runtime\n@@ipsets\n\n"
	for _, rec := range []string{"public\trule a\n\npublic\trule b", ""} {
		st, err := parseFirewalldPlan(head + "@@record " + strconv.Itoa(len(rec)) + "\n" + rec)
		if err != nil || st.zone != "public" || string(st.recorded) != rec || !st.perm.ipsets[IPSetNodes] || st.run.ipsets[IPSetNodes] {
			t.Errorf("record %q: %+v, %v", rec, st, err)
		}
	}
	if st, err := parseFirewalldPlan(head + "@@record -\n"); err != nil || st.recorded != nil {
		t.Errorf("no record: %+v, %v", st, err)
	}
	if _, err := parseFirewalldPlan(head + "@@record 40\nshort"); err == nil {
		t.Error("a record shorter than its size was taken")
	}
	if _, err := parseFirewalldPlan("@@zone \n" + head[len("@@zone public\n"):] + "@@record -\n"); err == nil {
		t.Error("an empty zone was taken")
	}
}
