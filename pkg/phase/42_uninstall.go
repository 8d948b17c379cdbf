package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// Uninstall takes the engine and what cargoship set up off every target:
// the engine's services stopped and disabled and its own killall run, then
// its files and directories, cargoship's own, and what cargoship placed,
// each checked gone afterwards. Workers first, then controllers.
type Uninstall struct {
	base
	Reset *PlanReset
	lists map[*node.Host]node.Uninstall
}

// Title implements Phase.
func (p *Uninstall) Title() string { return "Stop and uninstall" }

// Prepare implements Preparer: what to remove from each target, from the
// engine's list and the package's targets.
func (p *Uninstall) Prepare(context.Context) error {
	s := p.state
	p.lists = map[*node.Host]node.Uninstall{}
	for _, h := range p.Reset.Plan.Targets {
		p.lists[h] = s.UninstallFor(h, s.PlacedTargets(h))
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *Uninstall) ShouldRun() bool { return len(p.lists) > 0 }

// Plan implements Planner: per target, what is there to stop and remove.
func (p *Uninstall) Plan(ctx context.Context) ([]node.Change, error) {
	s := p.state
	return node.Collect(ctx, p.Reset.Plan.Targets, s.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		return s.PlanUninstall(ctx, h, p.lists[h])
	})
}

// Run implements Phase.
func (p *Uninstall) Run(ctx context.Context) error {
	s := p.state
	uninstall := func(ctx context.Context, h *node.Host) error {
		return s.UninstallNode(ctx, h, p.Title(), p.lists[h])
	}
	targets := p.Reset.Plan.Targets
	if err := targets.Workers().Parallel(ctx, s.Options.Concurrency, uninstall); err != nil {
		return err
	}
	return targets.Controllers().Parallel(ctx, s.Options.Concurrency, uninstall)
}
