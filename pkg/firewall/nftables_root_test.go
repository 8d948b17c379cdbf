package firewall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

var cluster = Desired{
	Peers: []string{"10.73.0.11", "10.73.0.12", "fd00::12"},
	CIDRs: []string{"10.42.0.0/16", "10.43.0.0/16"},
	Ports: []v1alpha1.Port{{Port: "6443"}, {Port: "30000-32767"}, {Port: "8472", Protocol: "udp"}},
	Rules: []v1alpha1.FirewallRule{
		{Name: "kubelet from mgmt", Source: "192.168.10.0/24", Port: "10250", Protocol: "tcp"},
		{Name: "no-telnet", Port: "23", Action: "drop"},
	},
}

// TestNFTables_Root applies the table in a throwaway network namespace with
// the real nft and kernel: twice (the second changes nothing), next to a
// table of someone else's that must survive, then after a flush of our
// table (the plan must notice and load it again).
func TestNFTables_Root(t *testing.T) {
	r := hosttest.Netns(t)
	if _, err := os.Stat("/usr/sbin/nft"); err != nil {
		t.Skip("needs nft (apt-get install -y nftables)")
	}
	ctx := context.Background()
	if _, err := r.Run(ctx, "nft 'add table inet admin; add chain inet admin input { type filter hook input priority 0; policy drop; }'"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "etc", "cargoship", "cargoship.nft")
	n := &NFTables{Path: path, NoUnit: true}

	present, active, err := n.Detect(ctx, r)
	if err != nil || !present || !active {
		t.Fatalf("Detect = %v %v %v", present, active, err)
	}
	plan, err := n.Plan(ctx, r, cluster)
	if err != nil || len(plan.Actions) != 1 {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "inet admin") {
		t.Errorf("warnings = %q", plan.Warnings)
	}
	if out, _ := r.Run(ctx, "nft list tables"); strings.Contains(out, "cargoship") {
		t.Fatal("Plan loaded the table")
	}
	counted := &hosttest.Fake{Else: r}
	if p, err := n.Apply(ctx, counted, cluster); err != nil || !p.Changed() {
		t.Fatalf("first apply = %+v %v", p, err)
	}
	if len(counted.Calls()) != 2 {
		t.Errorf("a cold apply is one read and one transaction; it ran %q", counted.Commands())
	}
	out, err := r.Run(ctx, "nft list table inet cargoship")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"10.42.0.0/16", "10.43.0.0/16", "10.73.0.11", "10.73.0.12", "fd00::12",
		"ip saddr 192.168.10.0/24 tcp dport 10250 accept",
		"tcp dport 23 drop",
		"ip saddr @trusted4 accept", "ip6 saddr @trusted6 accept",
		"tcp dport { 6443, 30000-32767 } accept", "udp dport 8472 accept",
		"policy accept",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("nft list table inet cargoship lacks %q:\n%s", want, out)
		}
	}
	if admin, err := r.Run(ctx, "nft list table inet admin"); err != nil || !strings.Contains(admin, "policy drop") {
		t.Errorf("someone else's table was touched: %v\n%s", err, admin)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "#!/usr/sbin/nft -f") {
		t.Errorf("file = %q", b)
	}
	if _, err := os.Stat(path + ".new"); !os.IsNotExist(err) {
		t.Error("temporary file left behind")
	}

	second, err := n.Apply(ctx, r, cluster)
	if err != nil || second.Changed() {
		t.Errorf("second apply = %+v %v", second, err)
	}

	if _, err := r.Run(ctx, "nft delete table inet cargoship"); err != nil {
		t.Fatal(err)
	}
	again, err := n.Plan(ctx, r, cluster)
	if err != nil || len(again.Actions) != 1 || !strings.Contains(again.Actions[0].Summary, "not in the ruleset") {
		t.Fatalf("after a flush: %+v %v", again, err)
	}
	if _, err := n.Apply(ctx, r, cluster); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "nft list table inet cargoship"); err != nil {
		t.Errorf("table not loaded again: %v", err)
	}

	// A changed document replaces the table in one transaction.
	fewer := cluster
	fewer.Peers = []string{"10.73.0.11"}
	if p, err := n.Apply(ctx, r, fewer); err != nil || !p.Changed() {
		t.Fatalf("changed apply = %+v %v", p, err)
	}
	if out, _ := r.Run(ctx, "nft list set inet cargoship trusted4"); strings.Contains(out, "10.73.0.12") || !strings.Contains(out, "10.73.0.11") {
		t.Errorf("trusted4 after removing a peer:\n%s", out)
	}
}

// TestNFTablesRejectedFileKeepsOld_Root: a file nft refuses is never moved
// into place, and the table loaded before stays.
func TestNFTablesRejectedFileKeepsOld_Root(t *testing.T) {
	r := hosttest.Netns(t)
	if _, err := os.Stat("/usr/sbin/nft"); err != nil {
		t.Skip("needs nft (apt-get install -y nftables)")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cargoship.nft")
	n := &NFTables{Path: path, NoUnit: true}
	if _, err := n.Apply(ctx, r, cluster); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	// Shadow nft with one that refuses every file, as a broken nft would.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "nft"), []byte("#!/bin/sh\ncase \"$1\" in -f) echo 'Error: syntax error' >&2; exit 1;; esac\nexec /usr/sbin/nft \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	fewer := cluster
	fewer.Peers = nil
	if _, err := n.Apply(ctx, r, fewer); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("apply with a refusing nft: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the refused file replaced the loaded one")
	}
	if _, err := os.Stat(path + ".new"); !os.IsNotExist(err) {
		t.Error("refused file left behind")
	}
	if out, _ := r.Run(ctx, "/usr/sbin/nft list set inet cargoship trusted4"); !strings.Contains(out, "10.73.0.12") {
		t.Errorf("the old table should still be loaded:\n%s", out)
	}
}
