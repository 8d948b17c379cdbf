package firewall

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// adminUFW is an active ufw with the admin's rules, one of them allowing a
// peer that is about to leave, without cargoship's tag.
func adminUFW() *fakeUFW {
	return &fakeUFW{Active: true, Rules: []fakeUFWRule{
		{Action: "allow", Proto: "tcp", Src: "any", DPort: "22"},
		{Action: "allow", Proto: "any", Src: "10.9.9.9", DPort: "any", Comment: "backup"},
	}}
}

// TestUFWForgetIsApplyWithoutThePeers: the same rules as applying the
// smaller fleet, in the same order; Plan is then empty.
func TestUFWForgetIsApplyWithoutThePeers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	forgot := newFakeHost(t, &fakeState{UFW: adminUFW()})
	applied := newFakeHost(t, &fakeState{UFW: adminUFW()})
	for _, h := range []*fakeHost{forgot, applied} {
		if _, err := (UFW{}).Apply(ctx, h, cluster); err != nil {
			t.Fatal(err)
		}
	}
	before := forgot.load(t).UFW.Rules
	plan, err := UFW{}.PlanForget(ctx, forgot, forgotten)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forgot.load(t).UFW.Rules, before) {
		t.Fatal("PlanForget changed ufw")
	}
	var cmds []string
	for _, a := range plan.Actions {
		cmds = append(cmds, a.Command)
	}
	if want := "ufw delete allow from 10.73.0.12\nufw delete allow from fd00::12"; strings.Join(cmds, "\n") != want {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(cmds, "\n"), want)
	}
	if _, err := (UFW{}).Forget(ctx, forgot, forgotten); err != nil {
		t.Fatal(err)
	}
	if _, err := (UFW{}).Apply(ctx, applied, smaller()); err != nil {
		t.Fatal(err)
	}
	if a, b := forgot.load(t).UFW.Rules, applied.load(t).UFW.Rules; !slices.Equal(a, b) {
		t.Errorf("after Forget:\n%+v\nafter Apply of the smaller fleet:\n%+v", a, b)
	}
	if p, err := (UFW{}).Plan(ctx, forgot, smaller()); err != nil || p.Changed() {
		t.Errorf("Plan of the smaller fleet after Forget = %+v %v", p.Actions, err)
	}
	if p, err := (UFW{}).Forget(ctx, forgot, forgotten); err != nil || p.Changed() {
		t.Errorf("second Forget = %+v %v", p, err)
	}
}

// TestUFWRemoveLeavesTheAdminsRules: every rule carrying cargoship's tag
// goes, the admin's stay in their order, and an inactive ufw is cleaned
// without being enabled.
func TestUFWRemoveLeavesTheAdminsRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newFakeHost(t, &fakeState{UFW: adminUFW()})
	if _, err := (UFW{}).Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	st := h.load(t)
	st.UFW.Active = false // the admin switched it off since
	h.save(t, st)
	plan, err := UFW{}.PlanRemove(ctx, h)
	if err != nil || len(plan.Actions) != 10 {
		t.Fatalf("plan = %+v %v", plan.Actions, err)
	}
	if len(h.load(t).UFW.Rules) != 12 {
		t.Fatal("PlanRemove changed ufw")
	}
	if _, err := (UFW{}).Remove(ctx, h); err != nil {
		t.Fatal(err)
	}
	got := h.load(t).UFW
	if want := adminUFW().Rules; !slices.Equal(got.Rules, want) || got.Active {
		t.Errorf("after Remove: active=%v %+v\nwant %+v", got.Active, got.Rules, want)
	}
	if p, err := (UFW{}).Remove(ctx, h); err != nil || p.Changed() {
		t.Errorf("second Remove = %+v %v", p, err)
	}
	absent := (&hosttest.Fake{Strict: true}).On("command -v ufw", "absent\n")
	if p, err := (UFW{}).Remove(ctx, absent); err != nil || p.Changed() {
		t.Errorf("no ufw: %+v %v", p, err)
	}
}
