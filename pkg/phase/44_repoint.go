package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// Repoint rewrites server: on the nodes that stay when a reset removed the
// server they joined through, and makes the first staying controller the
// cluster's first server when the old one left. server: is read only when
// the engine starts, so each changed node restarts, one at a time, each
// waited Ready; a node whose config needs no change is not touched.
type Repoint struct {
	base
	Reset    *PlanReset
	repoints []node.Repoint
}

// Title implements Phase.
func (p *Repoint) Title() string { return "Repoint the staying nodes" }

// Prepare implements Preparer: reads the survivors' configs.
func (p *Repoint) Prepare(ctx context.Context) error {
	var err error
	p.repoints, err = p.state.PlanRepoint(ctx, p.Reset.Plan)
	return err
}

// ShouldRun implements Conditional.
func (p *Repoint) ShouldRun() bool { return len(p.repoints) > 0 }

// Plan implements Planner.
func (p *Repoint) Plan(context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, r := range p.repoints {
		out = append(out, node.Change{Host: r.Host.String(), What: "rewrite " + p.state.Engine.Paths().Config + " to " + r.What() + ", and restart"})
	}
	return out, nil
}

// Run implements Phase.
func (p *Repoint) Run(ctx context.Context) error {
	for _, r := range p.repoints {
		if err := p.state.ApplyRepoint(ctx, r, p.Title()); err != nil {
			return err
		}
	}
	// Each node was uncordoned through another server while it restarted;
	// once every restart is over, confirm it through the server kubectl
	// settles on, so no node is left cordoned by a write that raced the
	// restarts (kubectl uncordon of a schedulable node changes nothing).
	for _, r := range p.repoints {
		if err := p.state.Uncordon(ctx, r.Host.NodeName()); err != nil {
			return fmt.Errorf("%s: uncordoning after the repoints: %w", r.Host, err)
		}
	}
	return nil
}
