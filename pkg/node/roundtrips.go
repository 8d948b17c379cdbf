package node

import (
	"context"
	"sort"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// A round trip is one command a phase sends one host (Runner.Run or
// Runner.Sudo) or one SFTP session it opens there: the unit a converged
// walk pays for in latency whatever the command does. Counting them per
// host and per phase shows which phases ask a host more than once when
// nothing changes (issue #16, goal 1).

// RoundTrip is how many round trips one phase made to one host.
type RoundTrip struct {
	Phase string
	Host  string
	N     int
}

// outsidePhases is the phase commands run while no phase is current count
// against (a lock refresh between two phases, say).
const outsidePhases = "(outside phases)"

// roundTrips is the Report's tally. Each StartPhase opens a slot of its
// own, so a phase title run twice (a clean-up, the e2e suite stepping a
// phase again) keeps two sets of counts rather than one sum.
type roundTrips struct {
	mu    sync.Mutex
	slots []tripSlot
	// current and outside are indexes into slots plus one, so the zero
	// value means none: the current phase's slot, and outsidePhases' (one
	// for the whole run, made when first needed).
	current, outside int
}

type tripSlot struct {
	phase string
	hosts map[string]int
}

// StartPhase makes the commands run from now on count against phase. The
// phase manager calls it before each phase; phases run one at a time, so
// one current phase is enough, whatever the phase does in parallel.
func (r *Report) StartPhase(phase string) {
	t := &r.trips
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slots = append(t.slots, tripSlot{phase: phase, hosts: map[string]int{}})
	t.current = len(t.slots)
}

// EndPhase ends the current phase and returns its round trips, one per
// host that had any, by host name. Commands run after it count against
// "(outside phases)" until the next StartPhase.
func (r *Report) EndPhase() []RoundTrip {
	t := &r.trips
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == 0 {
		return nil
	}
	s := t.slots[t.current-1]
	t.current = 0
	return s.list()
}

// RoundTrips returns every round trip counted so far: phases in the order
// they started, hosts by name within a phase. A host a phase never reached
// is left out.
func (r *Report) RoundTrips() []RoundTrip {
	t := &r.trips
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []RoundTrip
	for _, s := range t.slots {
		out = append(out, s.list()...)
	}
	return out
}

// countRoundTrip adds one round trip to name in the current phase.
func (r *Report) countRoundTrip(name string) {
	t := &r.trips
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.current
	if i == 0 {
		if t.outside == 0 {
			t.slots = append(t.slots, tripSlot{phase: outsidePhases, hosts: map[string]int{}})
			t.outside = len(t.slots)
		}
		i = t.outside
	}
	t.slots[i-1].hosts[name]++
}

func (s tripSlot) list() []RoundTrip {
	out := make([]RoundTrip, 0, len(s.hosts))
	for h, n := range s.hosts {
		out = append(out, RoundTrip{Phase: s.phase, Host: h, N: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// CountRoundTrips wraps rn so that every command it runs and every SFTP
// session it opens counts, under name, against r's current phase. The
// wrapper offers host.SFTPOpener exactly when rn does: host.Upload asserts
// it, and a wrapper that hid it (or offered it falsely) would change how
// files travel. Unwrap returns rn. A nil Report returns rn unwrapped.
func (r *Report) CountRoundTrips(name string, rn host.Runner) host.Runner {
	if r == nil || rn == nil {
		return rn
	}
	c := &countingRunner{inner: rn, name: name, rep: r}
	if o, ok := rn.(host.SFTPOpener); ok {
		return &countingSFTPRunner{countingRunner: c, opener: o}
	}
	return c
}

// countingRunner counts each command before passing it on: a command that
// fails still went to the host and back.
type countingRunner struct {
	inner host.Runner
	name  string
	rep   *Report
}

var _ host.Runner = (*countingRunner)(nil)

// String implements host.Runner: the host's own name, unchanged.
func (c *countingRunner) String() string { return c.inner.String() }

// Run implements host.Runner.
func (c *countingRunner) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	c.rep.countRoundTrip(c.name)
	return c.inner.Run(ctx, cmd, opts...)
}

// Sudo implements host.Runner.
func (c *countingRunner) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	c.rep.countRoundTrip(c.name)
	return c.inner.Sudo(ctx, cmd, opts...)
}

// Unwrap returns the runner being counted, for code that needs the
// concrete connection.
func (c *countingRunner) Unwrap() host.Runner { return c.inner }

// countingSFTPRunner is a countingRunner over a runner that opens SFTP
// sessions.
type countingSFTPRunner struct {
	*countingRunner
	opener host.SFTPOpener
}

var _ host.SFTPOpener = (*countingSFTPRunner)(nil)

// OpenSFTP implements host.SFTPOpener. A session counts as one round trip
// however many requests it carries, as does an attempt that fails. The
// commands a host.Conn runs to set a session up (finding sftp-server,
// once per connection; making the file's directory) go straight to the
// connection, inside pkg/host, and are not seen here.
func (c *countingSFTPRunner) OpenSFTP(ctx context.Context) (*host.SFTP, error) {
	c.rep.countRoundTrip(c.name)
	return c.opener.OpenSFTP(ctx)
}
