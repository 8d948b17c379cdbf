package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// concurrency is cargoship's default (settings: 30) and Ansible's forks.
const concurrency = 30

// uploadPhase is the phase whose time the raw transfer is set against:
// the bench's hosts take the binary route, which carries the 60 MiB binary.
var uploadPhase = phase.NewUploadBinary().Title()

// slowest names the n slowest phases of a walk, for seeing where the time
// goes without reading the log.
func slowest(timings []node.PhaseTiming, n int) string {
	ts := slices.Clone(timings)
	slices.SortStableFunc(ts, func(a, b node.PhaseTiming) int { return cmp.Compare(b.Duration, a.Duration) })
	var out []string
	for _, t := range ts[:min(n, len(ts))] {
		out = append(out, fmt.Sprintf("%s %.1fs", t.Title, t.Duration.Seconds()))
	}
	return strings.Join(out, ", ")
}

// phaseTime is how long the phase titled title took, 0 when it did not run.
func phaseTime(timings []node.PhaseTiming, title string) time.Duration {
	var d time.Duration
	for _, t := range timings {
		if t.Title == title {
			d += t.Duration
		}
	}
	return d
}

// perHostMax is the most round trips any one host had over the whole walk.
func perHostMax(trips []node.RoundTrip) int {
	total := map[string]int{}
	best := 0
	for _, t := range trips {
		total[t.Host] += t.N
		best = max(best, total[t.Host])
	}
	return best
}

// phaseTrips is one phase's round trips to its busiest host.
type phaseTrips struct {
	Phase string
	N     int
}

// topPhases are the n phases with the most round trips per host (the
// busiest host's), most first, ties in run order.
func topPhases(trips []node.RoundTrip, n int) []phaseTrips {
	var out []phaseTrips
	at := map[string]int{}
	for _, t := range trips {
		i, ok := at[t.Phase]
		if !ok {
			i = len(out)
			at[t.Phase] = i
			out = append(out, phaseTrips{Phase: t.Phase})
		}
		out[i].N = max(out[i].N, t.N)
	}
	slices.SortStableFunc(out, func(a, b phaseTrips) int { return cmp.Compare(b.N, a.N) })
	return out[:min(n, len(out))]
}
