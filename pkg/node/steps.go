package node

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/firewall"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// PlanSteps lists, reading only, what host preparation steps would do on h.
func PlanSteps(ctx context.Context, h *Host, steps []hostos.Step) ([]Change, error) {
	var out []Change
	r := prefetchSteps(ctx, h, steps)
	for _, st := range steps {
		c, err := st.Plan(ctx, r)
		if err != nil {
			return out, err
		}
		for _, a := range c.Actions {
			out = append(out, Change{Host: h.String(), What: a})
		}
	}
	return out, nil
}

// RunSteps applies host preparation steps on h and reports what they did;
// items the host refused without failing become notes.
func (s *Fleet) RunSteps(ctx context.Context, h *Host, phaseTitle string, steps []hostos.Step) error {
	r := prefetchSteps(ctx, h, steps)
	for _, st := range steps {
		c, err := st.Apply(ctx, r)
		if err != nil {
			return err
		}
		for _, a := range c.Actions {
			s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: a})
		}
		for _, f := range c.Failed {
			s.Report.Note("%s: %s: %s", h, phaseTitle, f)
			s.Logger().Warn("not applied", "host", h.String(), "phase", phaseTitle, "item", f.Item, "reason", f.Reason)
		}
		for _, w := range c.Warnings {
			s.Logger().Warn(w, "host", h.String(), "phase", phaseTitle)
		}
	}
	return nil
}

// prefetchSteps asks h in one round trip for the reads the steps will
// make (hostos.Prober), so a host that needs nothing is asked once.
func prefetchSteps(ctx context.Context, h *Host, steps []hostos.Step) host.Runner {
	var cmds []string
	for _, st := range steps {
		if p, ok := st.(hostos.Prober); ok {
			cmds = append(cmds, p.Probes()...)
		}
	}
	return host.Prefetch(ctx, h.Conn, cmds)
}

// FirewallOf is the front end cargoship configures on h (the one phase 13
// chooses), nil when the host has none.
func FirewallOf(ctx context.Context, h *Host) (firewall.Firewall, error) {
	found, err := firewall.DetectAll(ctx, h.Conn)
	if err != nil {
		return nil, fmt.Errorf("detecting the firewall: %w", err)
	}
	return firewall.Choose(h.OS, found)
}

// ForgetPeers is a host step that stops the firewall trusting nodes that
// left the cluster.
type ForgetPeers struct {
	Firewall firewall.Firewall
	Addrs    []string
}

// Plan implements hostos.Step.
func (f ForgetPeers) Plan(ctx context.Context, r host.Runner) (hostos.Change, error) {
	p, err := f.Firewall.PlanForget(ctx, r, f.Addrs)
	return f.change(p), err
}

// Apply implements hostos.Step.
func (f ForgetPeers) Apply(ctx context.Context, r host.Runner) (hostos.Change, error) {
	p, err := f.Firewall.Forget(ctx, r, f.Addrs)
	return f.change(p), err
}

func (f ForgetPeers) change(p firewall.Plan) hostos.Change {
	return firewallChange(f.Firewall, p)
}

// RemoveFirewall is a host step that takes out everything cargoship added
// to the firewall; the firewall itself keeps running.
type RemoveFirewall struct {
	Firewall firewall.Firewall
}

// Plan implements hostos.Step.
func (f RemoveFirewall) Plan(ctx context.Context, r host.Runner) (hostos.Change, error) {
	p, err := f.Firewall.PlanRemove(ctx, r)
	return firewallChange(f.Firewall, p), err
}

// Apply implements hostos.Step.
func (f RemoveFirewall) Apply(ctx context.Context, r host.Runner) (hostos.Change, error) {
	p, err := f.Firewall.Remove(ctx, r)
	return firewallChange(f.Firewall, p), err
}

func firewallChange(fw firewall.Firewall, p firewall.Plan) hostos.Change {
	c := hostos.Change{Warnings: p.Warnings}
	for _, a := range p.Actions {
		c.Actions = append(c.Actions, fw.Name()+": "+a.Summary)
	}
	return c
}
