package node

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Change is one thing a phase did, or in a dry run would do, on a host.
type Change struct {
	Host  string
	Phase string
	What  string
	Bytes int64 // bytes uploaded for it, when it is an upload
}

// Report collects changes, phase timings and round trips per host and
// phase; phases on many hosts add to it concurrently.
type Report struct {
	// Nothing ends the summary's first line when nothing changed; ""
	// says every host is as the package and inventory describe.
	Nothing string

	mu      sync.Mutex
	changes []Change
	timings []PhaseTiming
	notes   []string
	failure error

	trips roundTrips // commands per host per phase (roundtrips.go)
}

// PhaseTiming is how one phase ended and how long it took.
type PhaseTiming struct {
	Title    string
	Outcome  string // ran, skipped, reported, unassessed, failed
	Duration time.Duration
	Detail   string
}

// Add records a change.
func (r *Report) Add(c Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, c)
}

// Note records a line the summary should carry (e.g. a phase that claimed
// no host, or a sysctl a host could not set).
func (r *Report) Note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// AddTiming records how a phase ended.
func (r *Report) AddTiming(t PhaseTiming) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timings = append(r.timings, t)
}

// Fail records why the run stopped: the summary then lists what changed
// before it, and a dry run says it is incomplete rather than that nothing
// would change.
func (r *Report) Fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failure = err
}

// Failure is the error Fail recorded, or nil.
func (r *Report) Failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

// runFailure is why the run failed: the error Fail recorded, else a phase
// the timings say failed (a walk that did not call Fail), else nil.
func (r *Report) runFailure() error {
	if err := r.Failure(); err != nil {
		return err
	}
	for _, t := range r.Timings() {
		if t.Outcome == "failed" {
			return fmt.Errorf("phase %q failed", t.Title)
		}
	}
	return nil
}

// Changes returns a copy of every change, sorted by host then phase order.
func (r *Report) Changes() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Change(nil), r.changes...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// Ordered returns every change in the order it was made.
func (r *Report) Ordered() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Change(nil), r.changes...)
}

// Timings returns the phase timings in run order.
func (r *Report) Timings() []PhaseTiming {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]PhaseTiming(nil), r.timings...)
}

// Notes returns the notes in the order they were made.
func (r *Report) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.notes...)
}

// BytesUploaded sums the bytes every upload change sent.
func (r *Report) BytesUploaded() int64 {
	var n int64
	for _, c := range r.Changes() {
		n += c.Bytes
	}
	return n
}

// Summary renders the report for a terminal: what changed per host, then
// time per phase.
func (r *Report) Summary(dryRun bool) string {
	var b strings.Builder
	changes := r.Changes()
	verb := "changed"
	if dryRun {
		verb = "would change"
	}
	failure := r.runFailure()
	if failure != nil {
		fmt.Fprintf(&b, "failed: %v\n", failure)
		if dryRun {
			// The phases after the failure were never assessed: an empty
			// list says nothing about them.
			b.WriteString("dry run incomplete: what the failed phase and those after it would change is not known\n")
		}
		verb += " before the failure"
	}
	switch {
	case len(changes) == 0 && failure != nil:
		if !dryRun {
			b.WriteString("nothing changed before the failure\n")
		}
	case len(changes) == 0:
		nothing := r.Nothing
		if nothing == "" {
			nothing = "every host is already as the package and inventory describe"
		}
		fmt.Fprintf(&b, "nothing %s: %s\n", map[bool]string{true: "would change", false: "changed"}[dryRun], nothing)
	default:
		fmt.Fprintf(&b, "%s:\n", verb)
		host := ""
		for _, c := range changes {
			if c.Host != host {
				host = c.Host
				fmt.Fprintf(&b, "  %s\n", host)
			}
			fmt.Fprintf(&b, "    [%s] %s\n", c.Phase, c.What)
		}
	}
	if n := r.BytesUploaded(); n > 0 || !dryRun {
		fmt.Fprintf(&b, "uploaded: %s\n", HumanBytes(n))
	}
	for _, n := range r.Notes() {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("phases:\n")
	for _, t := range r.Timings() {
		line := fmt.Sprintf("  %-58s %-10s %8s", t.Title, t.Outcome, t.Duration.Round(time.Millisecond))
		if t.Detail != "" {
			line += "  " + t.Detail
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}
