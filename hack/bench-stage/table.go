package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

type results struct{ cargoship, ansible []measured }

// median of durations; the mean of the middle two for an even count.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func pick(ms []measured, cold bool) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		if cold {
			out[i] = m.cold
		} else {
			out[i] = m.converged
		}
	}
	return out
}

func secs(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.1f", d.Seconds())
	}
	return strings.Join(s, " ")
}

// print writes the table: medians, the ratio Ansible / cargoship (above 1
// means cargoship is faster), and every run.
func (r results) print(w io.Writer, c config) error {
	if _, err := fmt.Fprintf(w, "stage walk, %d hosts (1 controller, %d workers), %d fresh-fleet run(s) per tool, concurrency/forks %d, Ansible strategy %s\n",
		c.hosts, c.hosts-1, c.runs, concurrency, c.strategy); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%-10s %12s %12s %18s   %-22s %s\n", "pass", "cargoship", "ansible", "ansible/cargoship", "cargoship runs (s)", "ansible runs (s)"); err != nil {
		return err
	}
	for _, cold := range []bool{true, false} {
		name := "cold"
		if !cold {
			name = "converged"
		}
		cs, an := pick(r.cargoship, cold), pick(r.ansible, cold)
		mc, ma := median(cs), median(an)
		ratio := "-"
		if mc > 0 && ma > 0 {
			ratio = fmt.Sprintf("%.2fx", ma.Seconds()/mc.Seconds())
		}
		if _, err := fmt.Fprintf(w, "%-10s %12s %12s %18s   %-22s %s\n", name, cell(mc), cell(ma), ratio, secs(cs), secs(an)); err != nil {
			return err
		}
	}
	return nil
}

// cell is a median in seconds, "-" for a tool -only left out.
func cell(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
