package firewall

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

func TestNormalize(t *testing.T) {
	s, err := normalize(Desired{
		Peers: []string{"10.0.0.2", "10.0.0.1", "10.0.0.2", "::ffff:10.0.0.3", "fd00::1"},
		CIDRs: []string{"10.42.7.1/16", "10.42.0.0/24", "10.43.0.0/16", "fd00:42::/56"},
		Ports: []v1alpha1.Port{{Port: "6443"}, {Port: "6444"}, {Port: "30000-32767"}, {Port: "31000"}, {Port: "8472", Protocol: "udp"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := join(s.nodes4); got != "10.0.0.1 10.0.0.2 10.0.0.3" {
		t.Errorf("nodes4 = %s", got)
	}
	if got := join(s.nets4); got != "10.42.0.0/16 10.43.0.0/16" {
		t.Errorf("nets4 = %s (masked, covered /24 dropped)", got)
	}
	var ports []string
	for _, p := range s.ports {
		ports = append(ports, p.String()+"/"+p.proto)
	}
	if got := strings.Join(ports, " "); got != "6443-6444/tcp 30000-32767/tcp 8472/udp" {
		t.Errorf("ports = %s", got)
	}
	for _, bad := range []Desired{
		{Peers: []string{"node1"}},
		{Peers: []string{"10.0.0.1;reboot"}},
		{CIDRs: []string{"10.42.0.0/33"}},
		{Ports: []v1alpha1.Port{{Port: "0"}}},
		{Ports: []v1alpha1.Port{{Port: "6443", Protocol: "sctp"}}},
		{Ports: []v1alpha1.Port{{Port: "32767-30000"}}},
		{Rules: []v1alpha1.FirewallRule{{Name: "empty"}}},
		{Rules: []v1alpha1.FirewallRule{{Source: "10.0.0.1", Action: "permit"}}},
		{Rules: []v1alpha1.FirewallRule{{Source: "10.0.0.1", Protocol: "udp"}}},
		{Rules: []v1alpha1.FirewallRule{{Source: "$(reboot)"}}},
	} {
		if _, err := normalize(bad); err == nil {
			t.Errorf("%+v should be refused", bad)
		}
	}
}

func join[T interface{ String() string }](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = x.String()
	}
	return strings.Join(s, " ")
}

func TestChoose(t *testing.T) {
	el := hostos.OS{Family: v1alpha1.FamilyEnterpriseLinux}
	ubuntu := hostos.OS{Family: v1alpha1.FamilyDebian}
	fw := func(name string, active bool) Status { return Status{Name: name, Present: true, Active: active} }
	for _, c := range []struct {
		os    hostos.OS
		found []Status
		want  string
	}{
		{el, []Status{fw(NameFirewalld, true), fw(NameNFTables, true)}, NameFirewalld},
		{el, []Status{fw(NameFirewalld, false), fw(NameNFTables, true)}, NameNFTables},
		{ubuntu, []Status{fw(NameUFW, true), fw(NameNFTables, true)}, NameUFW},
		{ubuntu, []Status{fw(NameUFW, false), fw(NameNFTables, true)}, NameNFTables},
		{ubuntu, []Status{fw(NameUFW, false)}, ""},
		{ubuntu, nil, ""},
	} {
		got, err := Choose(c.os, c.found)
		name := ""
		if got != nil {
			name = got.Name()
		}
		if err != nil || name != c.want {
			t.Errorf("Choose(%s, %+v) = %q %v, want %q", c.os.Family, c.found, name, err, c.want)
		}
	}
	_, err := Choose(ubuntu, []Status{fw(NameFirewalld, true), fw(NameUFW, true)})
	if err == nil || !strings.Contains(err.Error(), "keep ufw") {
		t.Errorf("both active on Ubuntu: %v", err)
	}
	_, err = Choose(el, []Status{fw(NameFirewalld, true), fw(NameUFW, true)})
	if err == nil || !strings.Contains(err.Error(), "keep firewalld") {
		t.Errorf("both active on EL: %v", err)
	}
}

// TestDetectAllAsksOnce runs DetectAll's script in a real shell against
// firewall-cmd (stopped) and nft stand-ins, with no ufw on PATH: one round
// trip answers for all three front ends, and the nftables front end Choose
// returns plans from what that trip read, asking nothing more, once.
func TestDetectAllAsksOnce(t *testing.T) {
	dir := t.TempDir()
	tools := hosttest.Tools(t, "firewall-cmd", "nft")
	state := filepath.Join(dir, "state.json")
	tools.Env = []string{strings.Split(tools.Env[0], ":")[0] + ":/usr/bin:/bin", "FAKE_FIREWALL_STATE=" + state}
	if err := os.WriteFile(state, []byte(`{"Firewalld":{"Running":false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &hosttest.Fake{Else: tools}
	got, err := DetectAll(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Calls()) != 1 {
		t.Errorf("DetectAll made %d round trips: %q", len(h.Calls()), h.Commands())
	}
	if len(got) != 2 || got[0].Name != NameFirewalld || !got[0].Present || got[0].Active ||
		got[1].Name != NameNFTables || !got[1].Present || !got[1].Active {
		t.Fatalf("DetectAll = %+v", got)
	}
	fw, err := Choose(hostos.OS{Family: v1alpha1.FamilyDebian}, got)
	if err != nil || fw == nil || fw.Name() != NameNFTables {
		t.Fatalf("Choose = %v %v", fw, err)
	}
	none := &hosttest.Fake{Strict: true}
	p, err := fw.Plan(context.Background(), none, cluster)
	if err != nil {
		t.Fatalf("plan from the detection's read: %v (asked %q)", err, none.Commands())
	}
	if len(none.Calls()) != 0 {
		t.Errorf("the plan asked the host again: %q", none.Commands())
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "table inet admin drops input") {
		t.Errorf("warnings = %q", p.Warnings)
	}
	if !p.Changed() {
		t.Error("no table file and no table loaded: the plan must write and load it")
	}
	if _, err := fw.Plan(context.Background(), none, cluster); err == nil {
		t.Error("a second plan must read the host again, not reuse the detection's facts")
	}
}

// firewall-cmd --state: running, stopped, and failing while systemd runs
// firewalld (an SELinux host denying its D-Bus replies), which is an error
// rather than "not running".
func TestFirewalldDetect(t *testing.T) {
	for _, c := range []struct {
		out               string
		installed, active bool
		err               string
	}{
		{out: "absent\n"},
		{out: "rc=0 unit=active\nrunning\n", installed: true, active: true},
		{out: "rc=252 unit=inactive\nnot running\n", installed: true},
		{out: "rc=252 unit=\nnot running\n", installed: true},
		{out: "rc=254 unit=failed\nError: something\n", installed: true},
		{out: "rc=254 unit=active\nError: Did not receive a reply.\n", installed: true, err: "Did not receive a reply"},
	} {
		f := (&hosttest.Fake{}).On("firewall-cmd --state", c.out)
		installed, active, err := Firewalld{}.Detect(context.Background(), f)
		if installed != c.installed || active != c.active || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: installed %v active %v err %v", c.out, installed, active, err)
		}
	}
}

// TestNFTablesPlanUnit covers what the namespace test cannot touch: the
// boot unit, from captured answers, with the table file and the unit as
// real files.
func TestNFTablesPlanUnit(t *testing.T) {
	ctx := context.Background()
	file, err := RenderNFT(cluster)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := &NFTables{Path: filepath.Join(dir, "cargoship.nft"), UnitDir: filepath.Join(dir, "system")}
	if err := os.WriteFile(n.Path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	// the state script's answer, with the files as the script reads them
	answering := func(state string) *hosttest.Fake {
		for k, p := range map[string]string{"tablefile": n.Path, "unitfile": n.unitPath()} {
			if b, err := os.ReadFile(p); err == nil {
				state += k + "=" + base64.StdEncoding.EncodeToString(b) + "\n"
			}
		}
		return (&hosttest.Fake{Else: &hosttest.Local{}}).On("nft list chains", "nft=/usr/sbin/nft\ntable=yes\n"+state)
	}
	fresh, err := n.Plan(ctx, answering("enabled=disabled\nactive=inactive\n"), cluster)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range fresh.Actions {
		got = append(got, a.Summary)
	}
	want := "write " + n.unitPath() + "|enable cargoship-nftables.service so the table is loaded at boot|start cargoship-nftables.service"
	if strings.Join(got, "|") != want {
		t.Errorf("plan = %q", got)
	}
	if err := os.MkdirAll(n.UnitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.unitPath(), []byte(renderNFTUnit("/usr/sbin/nft", n.Path)), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := n.Plan(ctx, answering("enabled=enabled\nactive=active\n"), cluster); err != nil || p.Changed() {
		t.Errorf("converged host: %+v %v", p, err)
	}
	if p, err := n.Plan(ctx, answering("systemd=no\n"), cluster); err != nil || p.Changed() || len(p.Warnings) != 1 {
		t.Errorf("no systemd: %+v %v", p, err)
	}
	if _, err := n.Plan(ctx, (&hosttest.Fake{Else: &hosttest.Local{}}).On("nft list chains", "nft=\n"), cluster); err == nil {
		t.Error("no nft should be an error")
	}
}

func TestRenderNFTUnitRefusesOddPath(t *testing.T) {
	n := &NFTables{Path: filepath.Join(t.TempDir(), "cargo ship", "x.nft")}
	f := (&hosttest.Fake{Else: &hosttest.Local{}}).On("nft list chains", "nft=/usr/sbin/nft\ntable=no\nenabled=disabled\nactive=inactive\n")
	if _, err := n.Plan(context.Background(), f, cluster); err == nil {
		t.Error("a path with a space cannot go into a unit file")
	}
}
