package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// PlanReset works out which hosts a reset takes out and which stay, and
// refuses a reset that breaks a rule, before the lock is taken and before
// any host is changed. The later reset phases act on its plan.
type PlanReset struct {
	readOnly
	base
	Plan node.ResetPlan
}

// Title implements Phase.
func (p *PlanReset) Title() string { return "Plan the hosts to reset" }

// Run implements Phase.
func (p *PlanReset) Run(context.Context) error {
	s := p.state
	plan, err := node.PlanReset(s.Hosts, s.Options.TargetHosts)
	if err != nil {
		return err
	}
	p.Plan = plan
	s.Leave(plan.Targets)
	switch {
	case plan.Whole:
		s.Report.Note("whole reset of %d host(s): %s", len(plan.Targets), plan.Targets.Names())
	case plan.Through != nil:
		s.Report.Note("reset %s; %s stay; kubectl runs through %s", plan.Targets.Names(), plan.Survivors.Names(), plan.Through)
	default:
		s.Report.Note("reset %s; %s stay; no engine runs on the targets, so no node is drained", plan.Targets.Names(), plan.Survivors.Names())
	}
	s.Logger().Info("reset plan", "targets", plan.Targets.Names(), "survivors", plan.Survivors.Names(), "whole", plan.Whole)
	return nil
}
