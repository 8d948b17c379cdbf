package phase

import (
	"context"
	"sync"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// stepPhase runs host preparation steps (pkg/host/os) on the hosts that
// need them: Plan in a dry run, Apply otherwise. Items a host refuses
// without failing (a sysctl a container cannot set) become notes.
type stepPhase struct {
	title string
	state *State
	steps map[*Host][]hostos.Step
}

func (p *stepPhase) Title() string { return p.title }

func (p *stepPhase) ShouldRun() bool { return len(p.steps) > 0 }

func (p *stepPhase) hosts() Hosts {
	return p.state.Hosts.Filter(func(h *Host) bool { return len(p.steps[h]) > 0 })
}

// Plan implements Planner.
func (p *stepPhase) Plan(ctx context.Context) ([]Change, error) {
	var mu sync.Mutex
	var out []Change
	err := p.hosts().Parallel(ctx, p.state.Options.Concurrency, func(ctx context.Context, h *Host) error {
		for _, st := range p.steps[h] {
			c, err := st.Plan(ctx, h.Conn)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, a := range c.Actions {
				out = append(out, Change{Host: h.String(), What: a})
			}
			mu.Unlock()
		}
		return nil
	})
	return out, err
}

// Run implements Phase.
func (p *stepPhase) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *Host) error {
		for _, st := range p.steps[h] {
			c, err := st.Apply(ctx, h.Conn)
			if err != nil {
				return err
			}
			for _, a := range c.Actions {
				s.Report.Add(Change{Host: h.String(), Phase: p.title, What: a})
			}
			for _, f := range c.Failed {
				s.Report.Note("%s: %s: %s", h, p.title, f)
				s.logger().Warn("not applied", "host", h.String(), "phase", p.title, "item", f.Item, "reason", f.Reason)
			}
			for _, w := range c.Warnings {
				s.logger().Warn(w, "host", h.String(), "phase", p.title)
			}
		}
		return nil
	})
}

// uploadStepPhase is a stepPhase whose steps need files from the package
// on the host first (policy rpms, policy modules): it uploads them, then
// runs the steps; its plan lists both.
type uploadStepPhase struct {
	stepPhase
	uploads map[*Host][]placement
}

// Plan implements Planner.
func (p *uploadStepPhase) Plan(ctx context.Context) ([]Change, error) {
	up, err := p.state.planHosts(ctx, p.uploads)
	if err != nil {
		return nil, err
	}
	rest, err := p.stepPhase.Plan(ctx)
	return append(up, rest...), err
}

// Run implements Phase.
func (p *uploadStepPhase) Run(ctx context.Context) error {
	s := p.state
	err := s.Hosts.Filter(func(h *Host) bool { return len(p.uploads[h]) > 0 }).Parallel(ctx, s.Options.UploadConcurrency, func(ctx context.Context, h *Host) error {
		return s.placeAll(ctx, h, p.title, p.uploads[h])
	})
	if err != nil {
		return err
	}
	return p.stepPhase.Run(ctx)
}
