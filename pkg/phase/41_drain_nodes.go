package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// DrainNodes takes the targets of a subset reset out of the cluster, one at
// a time, through a staying controller: cordon and drain the node matched
// by the name the inventory gives it, stop its engine so no kubelet
// registers it again, then delete it. A whole reset drains nothing: there
// is no cluster left to move the pods to.
type DrainNodes struct {
	base
	Reset *PlanReset
	nodes node.Hosts // targets that are nodes of the cluster
}

// Title implements Phase.
func (p *DrainNodes) Title() string { return "Drain and delete the nodes" }

// Prepare implements Preparer: the targets the cluster holds a node for.
func (p *DrainNodes) Prepare(ctx context.Context) error {
	s := p.state
	p.nodes = nil
	if p.Reset.Plan.Whole || p.Reset.Plan.Through == nil {
		return nil
	}
	for _, h := range p.Reset.Plan.Targets {
		has, err := s.HasNode(ctx, h.NodeName())
		if err != nil {
			return err
		}
		if has {
			p.nodes = append(p.nodes, h)
		} else {
			s.Report.Note("%s: the cluster has no node %s: nothing to drain", h, h.NodeName())
		}
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *DrainNodes) ShouldRun() bool { return len(p.nodes) > 0 }

// Plan implements Planner.
func (p *DrainNodes) Plan(context.Context) ([]node.Change, error) {
	s := p.state
	var out []node.Change
	for _, h := range p.nodes {
		out = append(out,
			node.Change{Host: h.String(), What: fmt.Sprintf("cordon and drain node %s through %s", h.NodeName(), p.Reset.Plan.Through)},
			node.Change{Host: h.String(), What: "stop " + s.Engine.Service(h.IsController())},
			node.Change{Host: h.String(), What: "delete node " + h.NodeName()})
	}
	return out, nil
}

// Run implements Phase.
func (p *DrainNodes) Run(ctx context.Context) error {
	s := p.state
	return p.nodes.Sequential(ctx, func(ctx context.Context, h *node.Host) error {
		name := h.NodeName()
		if err := s.Cordon(ctx, name); err != nil {
			return err
		}
		if err := s.Drain(ctx, name); err != nil {
			return err
		}
		if err := s.StopEngine(ctx, h); err != nil {
			return err
		}
		if err := s.DeleteNode(ctx, name); err != nil {
			return err
		}
		s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: fmt.Sprintf("drained, stopped and deleted node %s", name)})
		return nil
	})
}
