package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// stepPhase runs host preparation steps (pkg/host/os) on the hosts that
// need them: Plan in a dry run, Apply otherwise. Items a host refuses
// without failing (a sysctl a container cannot set) become notes.
type stepPhase struct {
	title string
	base
	steps map[*node.Host][]hostos.Step
}

func (p *stepPhase) Title() string { return p.title }

func (p *stepPhase) ShouldRun() bool { return len(p.steps) > 0 }

func (p *stepPhase) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { return len(p.steps[h]) > 0 })
}

// Plan implements Planner.
func (p *stepPhase) Plan(ctx context.Context) ([]node.Change, error) {
	return node.Collect(ctx, p.hosts(), p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		return node.PlanSteps(ctx, h, p.steps[h])
	})
}

// Run implements Phase.
func (p *stepPhase) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		return s.RunSteps(ctx, h, p.title, p.steps[h])
	})
}

// uploadStepPhase is a stepPhase whose steps need files from the package
// on the host first (policy rpms, policy modules): it uploads them, then
// runs the steps; its plan lists both.
type uploadStepPhase struct {
	stepPhase
	uploads map[*node.Host][]node.Placement
}

// Plan implements Planner.
func (p *uploadStepPhase) Plan(ctx context.Context) ([]node.Change, error) {
	up, err := p.state.PlanHosts(ctx, p.uploads)
	if err != nil {
		return nil, err
	}
	rest, err := p.stepPhase.Plan(ctx)
	return append(up, rest...), err
}

// Run implements Phase.
func (p *uploadStepPhase) Run(ctx context.Context) error {
	s := p.state
	err := s.Hosts.Filter(func(h *node.Host) bool { return len(p.uploads[h]) > 0 }).Parallel(ctx, s.Options.UploadConcurrency, func(ctx context.Context, h *node.Host) error {
		return s.PlaceAll(ctx, h, p.title, p.uploads[h])
	})
	if err != nil {
		return err
	}
	return p.stepPhase.Run(ctx)
}
