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
		{cold: walkOf(10*time.Second, 200, 30<<20, nil, upload(4*time.Second)),
			converged: walkOf(2*time.Second, 0, 20<<20, trips), raw: 2 * time.Second},
		{cold: walkOf(12*time.Second, 200, 40<<20, nil, upload(6*time.Second)),
			converged: walkOf(4*time.Second, 0, 25<<20, trips[:2]), raw: 4 * time.Second},
	}}
	r := cr.row()
	if r.cold != 11*time.Second || r.converged != 3*time.Second || r.upload != 5*time.Second || r.raw != 3*time.Second {
		t.Errorf("medians: cold %s converged %s upload %s raw %s", r.cold, r.converged, r.upload, r.raw)
	}
	if r.egress != 200 || r.payload != 100 || r.rss != 40<<20 {
		t.Errorf("egress %d payload %d rss %d", r.egress, r.payload, r.rss)
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
	fan := int64(3 << 20)
	rows := []row{
		{hosts: 2, cold: 8 * time.Second, converged: 2 * time.Second, upload: 3 * time.Second, raw: 2 * time.Second,
			egress: 120 << 20, payload: 60 << 20, rss: 35 << 20, tripsPerHost: 40,
			topTrips: []phaseTrips{{"Prepare hosts", 12}, {"Update firewall", 8}}},
		{hosts: 10, cold: 30 * time.Second, egress: 600 << 20, payload: 60 << 20, egressFanout: &fan},
	}
	if err := writeCargoshipTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a head and a line per count:\n%s", b.String())
	}
	head := strings.Fields(lines[0])
	if head[0] != "hosts" || !strings.Contains(lines[0], "egress fan-out") || !strings.Contains(lines[0], "peak RSS") {
		t.Errorf("head: %q", lines[0])
	}
	for _, cell := range []string{"8.0s", "2.0s", "0.25", "3.0s", "1.50", "4.00", "120.0 MiB", "2.00", "n/a", "35.0 MiB", "40", "Prepare hosts 12, Update firewall 8"} {
		if !strings.Contains(lines[1], cell) {
			t.Errorf("2-host line lacks %q: %q", cell, lines[1])
		}
	}
	// not measured reads "-", a fan-out egress when there is one
	for _, cell := range []string{"30.0s", "-", "10.00", "3.0 MiB"} {
		if !strings.Contains(lines[2], cell) {
			t.Errorf("10-host line lacks %q: %q", cell, lines[2])
		}
	}
	if strings.Contains(lines[2], "n/a") {
		t.Errorf("10-host line has a fan-out egress: %q", lines[2])
	}
	// the columns line up: every cell of the head starts where the lines' do
	if i := strings.Index(lines[0], "converged"); lines[1][i-1] != ' ' || lines[1][i] == ' ' {
		t.Errorf("columns do not line up:\n%s", b.String())
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
