package main

import (
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
)

func walkOf(walk time.Duration, sent, rss int64, trips []node.RoundTrip, timings ...node.PhaseTiming) walkResult {
	return walkResult{Walk: walk, BytesSent: sent, MaxRSS: rss, RoundTrips: trips, Timings: timings}
}

// TestRowSumsUpRuns: medians of times, the most RSS and round trips of
// any run, the upload phase found by its title.
func TestRowSumsUpRuns(t *testing.T) {
	upload := func(d time.Duration) node.PhaseTiming { return node.PhaseTiming{Title: uploadPhase, Duration: d} }
	trips := []node.RoundTrip{
		{Phase: "Prepare hosts", Host: "kc0", N: 3}, {Phase: "Prepare hosts", Host: "kw0", N: 5},
		{Phase: "Update firewall", Host: "kc0", N: 4}, {Phase: "Update firewall", Host: "kw0", N: 1},
		{Phase: "Lock", Host: "kc0", N: 1}, {Phase: "Lock", Host: "kw0", N: 1},
		{Phase: "Facts", Host: "kw0", N: 2},
	}
	cr := countResults{hosts: 2, payload: 100, cargoship: []cargoshipMeasured{
		{cold: walkOf(10*time.Second, 110, 30<<20, nil, upload(4*time.Second)),
			direct:    walkOf(9*time.Second, 200, 50<<20, nil, upload(3*time.Second)),
			converged: walkOf(2*time.Second, 0, 20<<20, trips), raw: 2 * time.Second},
		{cold: walkOf(12*time.Second, 130, 40<<20, nil, upload(6*time.Second)),
			direct:    walkOf(11*time.Second, 200, 45<<20, nil, upload(5*time.Second)),
			converged: walkOf(4*time.Second, 0, 25<<20, trips[:2]), raw: 4 * time.Second},
	}}
	cr.cargoship[0].cold.Relayed, cr.cargoship[1].cold.Relayed = 1, 2
	r := cr.row()
	if r.cold != 11*time.Second || r.coldDirect != 10*time.Second || r.converged != 3*time.Second ||
		r.upload != 5*time.Second || r.uploadDirect != 4*time.Second || r.raw != 3*time.Second {
		t.Errorf("medians: cold %s direct %s converged %s upload %s direct %s raw %s", r.cold, r.coldDirect, r.converged, r.upload, r.uploadDirect, r.raw)
	}
	if r.egress != 200 || r.egressFanout != 120 || r.payload != 100 || r.rss != 50<<20 || r.relayed != 2 {
		t.Errorf("egress %d fan-out %d payload %d rss %d relayed %d", r.egress, r.egressFanout, r.payload, r.rss, r.relayed)
	}
	if r.tripsPerHost != 9 { // kw0: 5+1+1+2
		t.Errorf("round trips per host: %d, want 9", r.tripsPerHost)
	}
	want := []phaseTrips{{"Prepare hosts", 5}, {"Update firewall", 4}, {"Facts", 2}}
	if len(r.topTrips) != 3 || r.topTrips[0] != want[0] || r.topTrips[1] != want[1] || r.topTrips[2] != want[2] {
		t.Errorf("top phases: %v, want %v", r.topTrips, want)
	}
}

func TestCargoshipTable(t *testing.T) {
	var b strings.Builder
	rows := []row{
		{hosts: 2, cold: 8 * time.Second, coldDirect: 7 * time.Second, converged: 2 * time.Second,
			upload: 3 * time.Second, uploadDirect: 5 * time.Second, raw: 2 * time.Second,
			egress: 120 << 20, egressFanout: 66 << 20, payload: 60 << 20, relayed: 3, rss: 35 << 20, tripsPerHost: 40,
			topTrips: []phaseTrips{{"Prepare hosts", 12}, {"Update firewall", 8}}},
		{hosts: 10, cold: 30 * time.Second, egress: 600 << 20, payload: 60 << 20},
	}
	if err := writeCargoshipTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a head and a line per count:\n%s", b.String())
	}
	if !strings.HasPrefix(lines[0], "hosts") || !strings.Contains(lines[0], "egress fan-out") || !strings.Contains(lines[0], "peak RSS") {
		t.Errorf("head: %q", lines[0])
	}
	for _, cell := range []string{"8.0s", "7.0s", "2.0s", "0.25", "3.0s", "5.0s", "2.50", "3.50", "120.0 MiB", "2.00", "66.0 MiB", "1.10", " 3 ", "35.0 MiB", "40", "Prepare hosts 12, Update firewall 8"} {
		if !strings.Contains(lines[1], cell) {
			t.Errorf("2-host line lacks %q: %q", cell, lines[1])
		}
	}
	// not measured reads "-"
	for _, cell := range []string{"30.0s", "-", "10.00", "600.0 MiB"} {
		if !strings.Contains(lines[2], cell) {
			t.Errorf("10-host line lacks %q: %q", cell, lines[2])
		}
	}
}
func TestAnsibleTableOnlyWhereItRan(t *testing.T) {
	var b strings.Builder
	counts := []countResults{
		{hosts: 2, cargoship: []cargoshipMeasured{{cold: walkResult{Walk: time.Second}}}},
		{hosts: 10, cargoship: []cargoshipMeasured{{cold: walkResult{Walk: 10 * time.Second}, converged: walkResult{Walk: 2 * time.Second}}},
			ansible: []ansibleMeasured{{cold: 50 * time.Second, converged: 30 * time.Second}}},
	}
	if err := writeAnsibleTable(&b, counts); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "10 ") || !strings.HasPrefix(lines[2], "10 ") {
		t.Fatalf("want a head and cold and converged at 10 hosts:\n%s", out)
	}
	if !strings.Contains(lines[1], "5.00") || !strings.Contains(lines[2], "15.00") {
		t.Errorf("ratios:\n%s", out)
	}
	b.Reset()
	if err := writeAnsibleTable(&b, counts[:1]); err != nil || b.Len() != 0 {
		t.Errorf("no Ansible runs, no table: %q %v", b.String(), err)
	}
}
