package firewall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// nftHost is a namespace with someone else's table and cargoship's table
// applied for cluster from path.
func nftHost(t *testing.T) (*hosttest.Local, *NFTables) {
	t.Helper()
	r := hosttest.Netns(t)
	if _, err := os.Stat("/usr/sbin/nft"); err != nil {
		t.Skip("needs nft (apt-get install -y nftables)")
	}
	ctx := context.Background()
	if _, err := r.Run(ctx, "nft 'add table inet admin; add chain inet admin input { type filter hook input priority 0; policy drop; }; add rule inet admin input tcp dport 22 accept'"); err != nil {
		t.Fatal(err)
	}
	n := &NFTables{Path: filepath.Join(t.TempDir(), "etc", "cargoship", "cargoship.nft"), NoUnit: true}
	if _, err := n.Apply(ctx, r, cluster); err != nil {
		t.Fatal(err)
	}
	return r, n
}

func list(t *testing.T, r *hosttest.Local, what string) string {
	t.Helper()
	out, err := r.Run(context.Background(), "nft list "+what)
	if err != nil {
		t.Fatalf("nft list %s: %v", what, err)
	}
	return out
}

// TestNFTablesForgetIsApplyWithoutThePeers_Root: the file and the loaded
// table are what Apply of the smaller fleet gives, so its Plan is empty;
// the dry run loads nothing; IPv6's set, emptied, loses its elements.
func TestNFTablesForgetIsApplyWithoutThePeers_Root(t *testing.T) {
	r, n := nftHost(t)
	ctx := context.Background()
	before := list(t, r, "ruleset")
	plan, err := n.PlanForget(ctx, r, forgotten)
	if err != nil || len(plan.Actions) != 1 || !strings.Contains(plan.Actions[0].Summary, "10.73.0.12, fd00::12") {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if list(t, r, "ruleset") != before {
		t.Fatal("PlanForget changed the ruleset")
	}
	if _, err := n.Forget(ctx, r, forgotten); err != nil {
		t.Fatal(err)
	}
	want, err := RenderNFT(smaller())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(n.Path); string(b) != want {
		t.Errorf("file:\n%s\nwant\n%s", b, want)
	}
	if p, err := n.Plan(ctx, r, smaller()); err != nil || p.Changed() {
		t.Errorf("Plan of the smaller fleet after Forget = %+v %v", p.Actions, err)
	}
	forgot := list(t, r, "table inet cargoship")
	if strings.Contains(forgot, "10.73.0.12") || strings.Contains(forgot, "fd00::12") || !strings.Contains(forgot, "10.73.0.11") {
		t.Errorf("table after Forget:\n%s", forgot)
	}
	if !strings.Contains(list(t, r, "table inet admin"), "tcp dport 22 accept") {
		t.Error("the admin's table changed")
	}
	if p, err := n.Forget(ctx, r, forgotten); err != nil || p.Changed() {
		t.Errorf("second Forget = %+v %v", p, err)
	}
}

// TestNFTablesRemove_Root: only cargoship's table and file go; the admin's
// table stays as it was; a second Remove does nothing.
func TestNFTablesRemove_Root(t *testing.T) {
	r, n := nftHost(t)
	ctx := context.Background()
	admin := list(t, r, "table inet admin")
	plan, err := n.PlanRemove(ctx, r)
	if err != nil || len(plan.Actions) != 2 { // delete table, remove file
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if !strings.Contains(list(t, r, "tables"), "inet cargoship") {
		t.Fatal("PlanRemove deleted the table")
	}
	if _, err := n.Remove(ctx, r); err != nil {
		t.Fatal(err)
	}
	if tables := list(t, r, "tables"); strings.Contains(tables, "cargoship") || !strings.Contains(tables, "inet admin") {
		t.Errorf("tables after Remove:\n%s", tables)
	}
	if list(t, r, "table inet admin") != admin {
		t.Error("the admin's table changed")
	}
	if _, err := os.Stat(n.Path); !os.IsNotExist(err) {
		t.Errorf("table file still there: %v", err)
	}
	if p, err := n.Remove(ctx, r); err != nil || p.Changed() {
		t.Errorf("second Remove = %+v %v", p, err)
	}
	if p, err := n.Forget(ctx, r, forgotten); err != nil || p.Changed() {
		t.Errorf("Forget with no table file = %+v %v", p, err)
	}
}
