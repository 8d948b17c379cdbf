package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// countResults are every run at one host count.
type countResults struct {
	hosts     int
	payload   int64 // one host's payload (the largest)
	cargoship []cargoshipMeasured
	ansible   []ansibleMeasured
}

// row is one host count's line of the cargoship table: times are medians
// over the runs, peak RSS and round trips the most any run had.
type row struct {
	hosts int
	// cold, upload and egressFanout are the cold walk's with fan-out on
	// (the default); coldDirect, uploadDirect and egress the cold walk's
	// with it off, on fresh hosts of the same size.
	cold, coldDirect, converged   time.Duration
	upload, uploadDirect, raw     time.Duration
	egress, egressFanout, payload int64 // bytes sent by this machine; one host's payload
	relayed                       int   // files relayed host to host in the cold walk
	rss                           int64 // peak resident set of a walk's process, bytes
	tripsPerHost                  int   // converged: the busiest host's round trips
	topTrips                      []phaseTrips
}

// row sums up the cargoship runs at one count.
func (cr countResults) row() row {
	r := row{hosts: cr.hosts, payload: cr.payload}
	var cold, direct, conv, upload, uploadDirect, raw []time.Duration
	var egress, fanout []int64
	for i, m := range cr.cargoship {
		cold, direct, conv = append(cold, m.cold.Walk), append(direct, m.direct.Walk), append(conv, m.converged.Walk)
		upload = append(upload, phaseTime(m.cold.Timings, uploadPhase))
		uploadDirect = append(uploadDirect, phaseTime(m.direct.Timings, uploadPhase))
		raw = append(raw, m.raw)
		egress, fanout = append(egress, m.direct.BytesSent), append(fanout, m.cold.BytesSent)
		r.relayed = max(r.relayed, m.cold.Relayed)
		r.rss = max(r.rss, m.cold.MaxRSS, m.converged.MaxRSS, m.direct.MaxRSS)
		r.tripsPerHost = max(r.tripsPerHost, perHostMax(m.converged.RoundTrips))
		if i == 0 {
			r.topTrips = topPhases(m.converged.RoundTrips, 3)
		}
	}
	r.cold, r.coldDirect, r.converged = median(cold), median(direct), median(conv)
	r.upload, r.uploadDirect, r.raw = median(upload), median(uploadDirect), median(raw)
	r.egress, r.egressFanout = median(egress), median(fanout)
	return r
}

// cargoshipColumns head the cargoship table.
var cargoshipColumns = []string{
	"hosts", "cold", "cold direct", "converged", "conv/cold", "upload phase", "upload direct", "raw ssh",
	"upload direct/raw", "cold direct/raw", "egress direct", "/payload", "egress fan-out", "/payload",
	"relayed", "peak RSS", "round trips/host (conv)", "top phases by round trips/host (conv)",
}

// writeCargoshipTable writes one line per host count.
func writeCargoshipTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cells(tw, cargoshipColumns...)
	for _, r := range rows {
		var top []string
		for _, t := range r.topTrips {
			top = append(top, fmt.Sprintf("%s %d", t.Phase, t.N))
		}
		cells(tw,
			fmt.Sprint(r.hosts), secs(r.cold), secs(r.coldDirect), secs(r.converged), ratio(r.converged, r.cold),
			secs(r.upload), secs(r.uploadDirect), secs(r.raw), ratio(r.uploadDirect, r.raw), ratio(r.coldDirect, r.raw),
			size(r.egress), ratio(r.egress, r.payload), size(r.egressFanout), ratio(r.egressFanout, r.payload),
			fmt.Sprint(r.relayed), size(r.rss), fmt.Sprint(r.tripsPerHost), strings.Join(top, ", "),
		)
	}
	return tw.Flush()
}

// writeAnsibleTable writes, for each count Ansible ran at, both tools'
// medians cold and converged, the ratio Ansible / cargoship (above 1:
// cargoship is faster) and every run. It writes nothing when Ansible ran
// at no count.
func writeAnsibleTable(w io.Writer, counts []countResults) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ran := false
	for _, cr := range counts {
		if len(cr.ansible) == 0 {
			continue
		}
		if !ran {
			cells(tw, "hosts", "pass", "cargoship", "ansible", "ansible/cargoship", "cargoship runs (s)", "ansible runs (s)")
			ran = true
		}
		for _, cold := range []bool{true, false} {
			name := "cold"
			if !cold {
				name = "converged"
			}
			var cs, an []time.Duration
			for _, m := range cr.cargoship {
				cs = append(cs, pick(m.cold.Walk, m.converged.Walk, cold))
			}
			for _, m := range cr.ansible {
				an = append(an, pick(m.cold, m.converged, cold))
			}
			mc, ma := median(cs), median(an)
			cells(tw, fmt.Sprint(cr.hosts), name, secs(mc), secs(ma), ratio(ma, mc), runs(cs), runs(an))
		}
	}
	return tw.Flush()
}

// cells writes one line of a table. A tabwriter only buffers until Flush,
// which returns the write's error: there is none to check here.
func cells(tw *tabwriter.Writer, cs ...string) {
	_, _ = io.WriteString(tw, strings.Join(cs, "\t")+"\n")
}

// size is a byte count for people, "-" for one not measured.
func size(n int64) string {
	if n == 0 {
		return "-"
	}
	return node.HumanBytes(n)
}

func pick(cold, converged time.Duration, wantCold bool) time.Duration {
	if wantCold {
		return cold
	}
	return converged
}

// median of xs; the mean of the middle two for an even count; 0 for none.
func median[T ~int64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// secs is a duration in seconds, "-" for one not measured.
func secs(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// ratio is a/b to two places, "-" when either was not measured.
func ratio[T ~int64](a, b T) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// runs lists every run's seconds, "-" for none.
func runs(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.1f", d.Seconds())
	}
	return strings.Join(s, " ")
}

// printResults writes the cargoship table, then Ansible's where it ran.
func printResults(w io.Writer, c config, counts []countResults) error {
	var rows []row
	for _, cr := range counts {
		if len(cr.cargoship) > 0 {
			rows = append(rows, cr.row())
		}
	}
	if len(rows) > 0 {
		link := "unshaped"
		if c.linkMbit > 0 {
			link = fmt.Sprintf("this machine behind %d Mbit/s", c.linkMbit)
		}
		if _, err := fmt.Fprintf(w, "the staging half of apply (cargoship), 1 controller and hosts-1 workers, %d fresh-fleet run(s) per count, concurrency %d, link %s; times are medians, peak RSS and round trips the most of any run\n",
			c.runs, concurrency, link); err != nil {
			return err
		}
		if err := writeCargoshipTable(w, rows); err != nil {
			return err
		}
	}
	var an bytes.Buffer
	if err := writeAnsibleTable(&an, counts); err != nil {
		return err
	}
	if an.Len() > 0 {
		if _, err := fmt.Fprintf(w, "\nagainst Ansible (forks %d, strategy %s), %d run(s) per count\n", concurrency, c.strategy, c.runs); err != nil {
			return err
		}
		_, err := w.Write(an.Bytes())
		return err
	}
	return nil
}
