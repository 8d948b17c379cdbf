package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Uninstall takes the engine and what cargoship set up off every target:
// the engine's services stopped and disabled and its own killall run, then
// its files and directories (mounts below them first, one file system
// only), cargoship's own, and what the host's placement record says
// cargoship placed, while it is still that (docs/reference/behaviour.md,
// Removing a host), each checked gone afterwards. Workers first, then
// controllers.
type Uninstall struct {
	base
	Reset *PlanReset
	lists map[*node.Host]node.Uninstall
	// steps undo the host preparation: /etc/hosts block, sysctl, modules
	// and fapolicyd files, peer relay keys a killed run left, the
	// firewall configuration cargoship added.
	steps map[*node.Host][]hostos.Step
}

// Title implements Phase.
func (p *Uninstall) Title() string { return "Stop and uninstall" }

// Prepare implements Preparer: what to remove from each target, from the
// engine's list and the package's targets, and each target's firewall.
func (p *Uninstall) Prepare(ctx context.Context) error {
	s := p.state
	p.lists = map[*node.Host]node.Uninstall{}
	for _, h := range p.Reset.Plan.Targets {
		p.lists[h] = s.UninstallFor(h, s.PlacedTargets(h))
	}
	var err error
	p.steps, err = node.Map(ctx, p.Reset.Plan.Targets, s.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]hostos.Step, bool, error) {
		steps := []hostos.Step{hostos.Unprepare{Configurer: hostos.For(h.OS)}, node.RemoveRelayKeys{Address: h.Facts.PrivateAddress}}
		fw, err := node.FirewallOf(ctx, h)
		if fw != nil {
			steps = append(steps, node.RemoveFirewall{Firewall: fw})
		}
		return steps, err == nil, err
	})
	return err
}

// ShouldRun implements Conditional.
func (p *Uninstall) ShouldRun() bool { return len(p.lists) > 0 }

// Plan implements Planner: per target, what is there to stop and remove.
func (p *Uninstall) Plan(ctx context.Context) ([]node.Change, error) {
	s := p.state
	return node.Collect(ctx, p.Reset.Plan.Targets, s.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		engine, err := s.PlanUninstall(ctx, h, p.lists[h])
		if err != nil {
			return nil, err
		}
		prep, err := node.PlanSteps(ctx, h, p.steps[h])
		return append(engine, prep...), err
	})
}

// Run implements Phase.
func (p *Uninstall) Run(ctx context.Context) error {
	s := p.state
	uninstall := func(ctx context.Context, h *node.Host) error {
		if err := s.UninstallNode(ctx, h, p.Title(), p.lists[h]); err != nil {
			return err
		}
		return s.RunSteps(ctx, h, p.Title(), p.steps[h])
	}
	targets := p.Reset.Plan.Targets
	if err := targets.Workers().Parallel(ctx, s.Options.Concurrency, uninstall); err != nil {
		return err
	}
	return targets.Controllers().Parallel(ctx, s.Options.Concurrency, uninstall)
}
