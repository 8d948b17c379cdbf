package firewall

import (
	"context"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// TestParseUFWAdded reads the spellings of ufw's get_command.
func TestParseUFWAdded(t *testing.T) {
	out := `Added user rules (see 'ufw status' for running firewall):
ufw allow 22/tcp
ufw allow from 10.73.0.11 comment 'cargoship peer'
ufw allow 30000:32767/tcp comment 'cargoship port'
ufw allow from 192.168.10.0/24 to any port 10250 proto tcp comment 'cargoship rule kubelet'
ufw deny 23/tcp comment 'cargoship rule no-telnet'
ufw allow in on eth0 to any port 80
ufw route allow from 10.42.0.0/16
ufw allow out 53
ufw allow OpenSSH
ufw limit from 10.0.0.0/8 port 1234 to any
`
	got := parseUFWAdded(out)
	want := []ufwRule{
		{"allow", "any", "22", "tcp", ""},
		{"allow", "10.73.0.11", "any", "any", "cargoship peer"},
		{"allow", "any", "30000:32767", "tcp", "cargoship port"},
		{"allow", "192.168.10.0/24", "10250", "tcp", "cargoship rule kubelet"},
		{"deny", "any", "23", "tcp", "cargoship rule no-telnet"},
	}
	// OpenSSH is an app name in the short form: it parses as a port
	// "OpenSSH", which matches no rule cargoship renders.
	want = append(want, ufwRule{"allow", "any", "OpenSSH", "any", ""})
	if len(got) != len(want) {
		t.Fatalf("got %d rules: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestUFWApplyTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{UFW: &fakeUFW{Active: true, Rules: []fakeUFWRule{{Action: "allow", Proto: "tcp", Src: "any", DPort: "22"}}}})
	u := UFW{}
	present, active, err := u.Detect(ctx, h)
	if err != nil || !present || !active {
		t.Fatalf("Detect = %v %v %v", present, active, err)
	}
	plan, err := u.Plan(ctx, h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.load(t).UFW.Rules) != 1 {
		t.Fatal("Plan changed ufw")
	}
	var cmds []string
	for _, a := range plan.Actions {
		cmds = append(cmds, a.Command)
	}
	want := []string{
		"ufw allow from 10.73.0.11 comment 'cargoship peer'",
		"ufw allow from 10.73.0.12 comment 'cargoship peer'",
		"ufw allow from fd00::12 comment 'cargoship peer'",
		"ufw allow from 10.42.0.0/16 comment 'cargoship network'",
		"ufw allow from 10.43.0.0/16 comment 'cargoship network'",
		"ufw allow 6443/tcp comment 'cargoship port'",
		"ufw allow 30000:32767/tcp comment 'cargoship port'",
		"ufw allow 8472/udp comment 'cargoship port'",
		"ufw allow proto tcp from 192.168.10.0/24 to any port 10250 comment 'cargoship rule kubelet-from-mgmt'",
		"ufw prepend deny 23/tcp comment 'cargoship rule no-telnet'",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	if _, err := u.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	rules := h.load(t).UFW.Rules
	if len(rules) != 11 || rules[0].DPort != "23" || rules[0].Action != "deny" || rules[1].DPort != "22" {
		t.Errorf("rules = %+v", rules)
	}
	if again, err := u.Apply(ctx, h, cluster); err != nil || again.Changed() {
		t.Errorf("second apply = %+v %v", again, err)
	}
}

func TestUFWRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{UFW: &fakeUFW{Active: true, Rules: []fakeUFWRule{{Action: "allow", Proto: "any", Src: "10.9.9.9", DPort: "any"}}}})
	if _, err := (UFW{}).Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	d := cluster
	d.Peers = []string{"10.73.0.11"}
	d.Rules = nil
	plan, err := UFW{}.Apply(ctx, h, d)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, a := range plan.Actions {
		cmds = append(cmds, a.Command)
	}
	// In ufw's listing order: the prepended deny comes first.
	want := "ufw delete deny 23/tcp\nufw delete allow from 10.73.0.12\nufw delete allow from fd00::12\nufw delete allow proto tcp from 192.168.10.0/24 to any port 10250"
	if strings.Join(cmds, "\n") != want {
		t.Errorf("commands:\n%s\nwant\n%s", strings.Join(cmds, "\n"), want)
	}
	rules := h.load(t).UFW.Rules
	if len(rules) != 7 || rules[0].Src != "10.9.9.9" {
		t.Errorf("rules = %+v", rules)
	}
}

// TestUFWInactiveNeverEnabled: cargoship does not turn ufw on.
func TestUFWInactiveNeverEnabled(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t, &fakeState{UFW: &fakeUFW{}})
	_, active, err := UFW{}.Detect(context.Background(), h)
	if err != nil || active {
		t.Fatalf("Detect active=%v %v", active, err)
	}
	if _, err := (UFW{}).Apply(context.Background(), h, cluster); err == nil {
		t.Error("Apply on an inactive ufw should fail")
	}
	for _, c := range h.load(t).Calls {
		if c[0] == "ufw" && c[1] != "status" {
			t.Errorf("ran %q on an inactive ufw", c)
		}
	}
}

// TestUFWAsksOnceConverged: the detection reads an active ufw's rules, so
// a converged host costs one round trip and a cold one two (the
// detection, then every rule in one script); the rules it read serve one
// plan only.
func TestUFWAsksOnceConverged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{UFW: &fakeUFW{Active: true, Rules: []fakeUFWRule{{Action: "allow", Proto: "tcp", Src: "any", DPort: "22"}}}})
	walk := func() (Plan, int) {
		counting := &hosttest.Fake{Else: h.Local}
		found, err := DetectAll(ctx, counting)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := Choose(hostos.OS{Family: v1alpha1.FamilyDebian}, found)
		if err != nil || fw == nil || fw.Name() != NameUFW {
			t.Fatalf("Choose = %v, %v", fw, err)
		}
		p, err := fw.Apply(ctx, counting, cluster)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Plan(ctx, &hosttest.Fake{Strict: true}, cluster); err == nil {
			t.Error("a second plan must read the host again, not reuse the detection's rules")
		}
		return p, len(counting.Calls())
	}
	cold, trips := walk()
	if !cold.Changed() || trips != 2 {
		t.Errorf("cold: changed=%v in %d round trips; want changes in 2", cold.Changed(), trips)
	}
	if n := len(h.load(t).UFW.Rules); n != 11 {
		t.Errorf("cold: %d rules; want 11", n)
	}
	again, trips := walk()
	if again.Changed() || trips != 1 {
		t.Errorf("converged: changed=%v in %d round trips; want nothing in 1: %+v", again.Changed(), trips, again.Actions)
	}
}
