package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// ForgetHosts makes the hosts that stay forget the ones a subset reset
// removed: their lines leave cargoship's /etc/hosts block and their
// addresses leave the firewall's trusted peers. Nothing else changes, and
// a host where cargoship wrote neither is left alone.
type ForgetHosts struct {
	stepPhase
	Reset *PlanReset
}

// NewForgetHosts is the reset phase after the uninstall.
func NewForgetHosts(reset *PlanReset) *ForgetHosts {
	return &ForgetHosts{stepPhase: stepPhase{title: "Forget the removed hosts"}, Reset: reset}
}

// Prepare implements Preparer: the survivors and their firewall front end.
func (p *ForgetHosts) Prepare(ctx context.Context) error {
	plan := p.Reset.Plan
	p.steps = map[*node.Host][]hostos.Step{}
	if plan.Whole || len(plan.Survivors) == 0 {
		return nil
	}
	var addrs []string
	for _, h := range plan.Targets {
		if a := h.EffectiveSpec().PrivateAddress; a != "" {
			addrs = append(addrs, a)
		}
	}
	steps, err := node.Map(ctx, plan.Survivors, p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]hostos.Step, bool, error) {
		steps := []hostos.Step{hostos.ForgetHosts{Addresses: addrs}}
		fw, err := node.FirewallOf(ctx, h)
		if err != nil {
			return nil, false, err
		}
		if fw != nil {
			steps = append(steps, node.ForgetPeers{Firewall: fw, Addrs: addrs})
		}
		return steps, true, nil
	})
	p.steps = steps
	return err
}
