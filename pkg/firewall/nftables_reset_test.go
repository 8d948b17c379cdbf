package firewall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// TestForgetNFTIsRenderWithoutThePeers: for every subset of peers, taking
// them out of the rendered file gives the file rendered without them,
// a peer inside a trusted network and an IPv4-mapped spelling included.
func TestForgetNFTIsRenderWithoutThePeers(t *testing.T) {
	d := cluster
	d.Peers = []string{"10.73.0.11", "10.73.0.12", "fd00::12", "10.42.9.9", "10.73.0.13"}
	full, err := RenderNFT(d)
	if err != nil {
		t.Fatal(err)
	}
	for mask := 0; mask < 1<<len(d.Peers); mask++ {
		var gone, kept []string
		for i, p := range d.Peers {
			if mask&(1<<i) != 0 {
				if p == "10.73.0.13" {
					p = "::ffff:10.73.0.13"
				}
				gone = append(gone, p)
			} else {
				kept = append(kept, p)
			}
		}
		less := d
		less.Peers = kept
		want, _ := RenderNFT(less)
		got, _, err := ForgetNFT(full, gone)
		if err != nil || got != want {
			t.Errorf("forgetting %q: %v\n%s\nwant\n%s", gone, err, got, want)
		}
	}
	if _, _, err := ForgetNFT("table inet cargoship {}\n", []string{"10.73.0.11"}); err == nil {
		t.Error("a file cargoship did not render should be refused")
	}
	if _, _, err := ForgetNFT(full, []string{"kw0"}); err == nil {
		t.Error("a name is not an address")
	}
}

// TestNFTablesRemoveUnit covers what the namespace test cannot: the boot
// unit is stopped, disabled and removed, and systemd reloaded, from
// captured answers; the unit and table files are real.
func TestNFTablesRemoveUnit(t *testing.T) {
	ctx := context.Background()
	file, err := RenderNFT(cluster)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := &NFTables{Path: filepath.Join(dir, "cargoship.nft"), UnitDir: filepath.Join(dir, "system")}
	if err := os.MkdirAll(n.UnitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{n.Path: file, n.unitPath(): renderNFTUnit("/usr/sbin/nft", n.Path), filepath.Join(n.UnitDir, "nftables.service"): "[Unit]\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The unit's state as systemctl and nft would report it, changed by
	// the commands that change it.
	enabled, active, table := "enabled", "active", "yes"
	f := (&hosttest.Fake{Else: &hosttest.Local{}}).
		Handle("nft list chains", func(hosttest.Call) (string, error) {
			return "nft=/usr/sbin/nft\ntable=" + table + "\nenabled=" + enabled + "\nactive=" + active + "\n", nil
		}).
		Handle("systemctl stop", func(c hosttest.Call) (string, error) {
			active, table = "inactive", "no" // ExecStop deletes the table
			if strings.Contains(c.Cmd, "systemctl disable") {
				enabled = "disabled"
			}
			return "", nil
		}).
		On("systemctl daemon-reload", "").
		Handle("delete table inet cargoship", func(hosttest.Call) (string, error) { table = "no"; return "", nil })
	plan, err := n.PlanRemove(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range plan.Actions {
		got = append(got, a.Summary)
	}
	want := []string{
		"stop cargoship-nftables.service (its stop deletes table inet cargoship only)",
		"disable cargoship-nftables.service",
		"remove " + n.unitPath(),
		"make systemd forget cargoship-nftables.service",
		"delete table inet cargoship",
		"remove " + n.Path,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := n.Remove(ctx, f); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{n.Path, n.unitPath()} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(n.UnitDir, "nftables.service")); err != nil {
		t.Error("the distribution's nftables.service was touched")
	}
	for _, c := range f.Commands() {
		if strings.Contains(c, "nftables.service") && !strings.Contains(c, NFTUnit) {
			t.Errorf("ran %q: nftables.service is never stopped or disabled", c)
		}
	}
	if !f.Ran("systemctl daemon-reload") {
		t.Error("systemd was not told the unit is gone")
	}
	if p, err := n.Remove(ctx, f); err != nil || p.Changed() {
		t.Errorf("second Remove = %+v %v", p, err)
	}
}
