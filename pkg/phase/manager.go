package phase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// cleanupTimeout bounds clean-up after a failure or an interrupt, which runs
// on a fresh context so an interrupted run still releases its locks.
const cleanupTimeout = 2 * time.Minute

// Manager walks a phase list over one State.
type Manager struct {
	Phases []Phase
	State  *node.Fleet
}

// Run runs every phase in order. In a dry run, read-only phases run, phases
// with their own dry-run path run it, and every other phase is prepared and
// reported with the work it would do. On failure, every phase that ran and
// can clean up does, in reverse order.
func (m *Manager) Run(ctx context.Context) error {
	s := m.State
	var ran []Phase
	for _, p := range m.Phases {
		if err := ctx.Err(); err != nil {
			m.cleanUp(ran)
			return fmt.Errorf("interrupted before %q: %w", p.Title(), err)
		}
		start := time.Now()
		s.Report.StartPhase(p.Title())
		outcome, detail, err := m.runOne(ctx, p)
		m.logRoundTrips(p.Title())
		s.Report.AddTiming(node.PhaseTiming{Title: p.Title(), Outcome: outcome, Duration: time.Since(start), Detail: detail})
		if outcome == "ran" || outcome == "dry-run" || err != nil {
			ran = append(ran, p)
		}
		if err != nil {
			s.Log.Error("phase failed", "phase", p.Title(), "error", err)
			m.cleanUp(ran)
			return fmt.Errorf("phase %q: %w", p.Title(), err)
		}
	}
	return nil
}

// runOne prepares and runs (or reports) one phase and says how it ended.
func (m *Manager) runOne(ctx context.Context, p Phase) (outcome, detail string, err error) {
	s := m.State
	dry := s.Options.DryRun
	mode := modeOf(p)
	Bind(p, s)
	if pr, ok := p.(Preparer); ok {
		if err := pr.Prepare(ctx); err != nil {
			if dry && errors.Is(err, ErrUnassessed) {
				s.Log.Info("unassessed", "phase", p.Title())
				return "unassessed", err.Error(), nil
			}
			return "failed", "", fmt.Errorf("prepare: %w", err)
		}
	}
	if c, ok := p.(Conditional); ok && !c.ShouldRun() {
		s.Log.Debug("skipped: nothing to do", "phase", p.Title())
		return "skipped", "", nil
	}
	switch {
	case !dry:
		s.Log.Info("running phase", "phase", p.Title())
		if err := p.Run(ctx); err != nil {
			return "failed", "", err
		}
		return "ran", "", nil
	case mode == ReadOnly:
		s.Log.Info("running phase (reads only)", "phase", p.Title())
		if err := p.Run(ctx); err != nil {
			return "failed", "", err
		}
		return "ran", "", nil
	case mode == OwnDryRun:
		d, ok := p.(DryRunner)
		if !ok {
			return "failed", "", fmt.Errorf("declares its own dry-run path but has no DryRun method")
		}
		if err := d.DryRun(ctx); err != nil {
			return "failed", "", err
		}
		return "dry-run", "", nil
	}
	return m.report(ctx, p)
}

// report lists a reported phase's work without running it.
func (m *Manager) report(ctx context.Context, p Phase) (string, string, error) {
	s := m.State
	pl, ok := p.(Planner)
	if !ok {
		s.Report.Add(node.Change{Host: "(cluster)", Phase: p.Title(), What: "would run"})
		return "reported", "", nil
	}
	changes, err := pl.Plan(ctx)
	if errors.Is(err, ErrUnassessed) {
		return "unassessed", err.Error(), nil
	}
	if err != nil {
		return "failed", "", fmt.Errorf("plan: %w", err)
	}
	for _, c := range changes {
		c.Phase = p.Title()
		s.Report.Add(c)
	}
	s.Log.Info("reported", "phase", p.Title(), "changes", len(changes))
	return "reported", fmt.Sprintf("%d change(s)", len(changes)), nil
}

// logRoundTrips ends the phase's round-trip count and logs it, one line
// per host, a host the phase never reached as n=0: "each phase asks each
// host once" is read off these lines.
func (m *Manager) logRoundTrips(title string) {
	s := m.State
	log := s.Logger()
	trips := s.Report.EndPhase()
	counted := make(map[string]int, len(trips))
	for _, t := range trips {
		counted[t.Host] = t.N
	}
	for _, h := range s.Hosts {
		name := h.String()
		log.Debug("round trips", "phase", title, "host", name, "n", counted[name])
		delete(counted, name)
	}
	for _, t := range trips { // counted under a name the fleet does not list
		if _, ok := counted[t.Host]; ok {
			log.Debug("round trips", "phase", title, "host", t.Host, "n", t.N)
		}
	}
}

// cleanUp gives every phase that ran a chance to release what it holds.
func (m *Manager) cleanUp(ran []Phase) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for i := len(ran) - 1; i >= 0; i-- {
		if c, ok := ran[i].(CleanUpper); ok {
			m.State.Log.Debug("cleaning up", "phase", ran[i].Title())
			c.CleanUp(ctx)
		}
	}
}

// Step runs one phase the way Run does (prepare, condition, run or report)
// and records its timing, without cleaning up on failure: the e2e suite
// walks the phase list one phase at a time with it and asserts after each.
func (m *Manager) Step(ctx context.Context, p Phase) (outcome string, err error) {
	start := time.Now()
	m.State.Report.StartPhase(p.Title())
	outcome, detail, err := m.runOne(ctx, p)
	m.logRoundTrips(p.Title())
	m.State.Report.AddTiming(node.PhaseTiming{Title: p.Title(), Outcome: outcome, Duration: time.Since(start), Detail: detail})
	if err != nil {
		return outcome, fmt.Errorf("phase %q: %w", p.Title(), err)
	}
	return outcome, nil
}

// CleanUpAll cleans up every phase that can, in reverse order; the e2e
// suite calls it when a walk stops early.
func (m *Manager) CleanUpAll() { m.cleanUp(m.Phases) }
