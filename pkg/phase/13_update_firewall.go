package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/firewall"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// UpdateFirewall configures each host's firewall front end (with
// --update-firewall): it trusts every other node and the engine's pod and
// service CIDRs, opens the engine's ports and the configured ones, and
// applies the configured rules.
type UpdateFirewall struct {
	base
	fronts  map[*node.Host]firewall.Firewall
	desired map[*node.Host]firewall.Desired
}

// Title implements Phase.
func (p *UpdateFirewall) Title() string { return "Updating hosts firewall" }

// Prepare implements Preparer: it detects each host's front end and works
// out what the cluster needs from it, reading only.
func (p *UpdateFirewall) Prepare(ctx context.Context) error {
	s := p.state
	p.fronts, p.desired = map[*node.Host]firewall.Firewall{}, map[*node.Host]firewall.Desired{}
	if !s.Options.UpdateFirewall {
		return nil
	}
	type chosen struct {
		fw      firewall.Firewall
		desired firewall.Desired
	}
	found, err := node.Map(ctx, s.Hosts, s.Options.Concurrency, func(ctx context.Context, h *node.Host) (chosen, bool, error) {
		fw, err := node.FirewallOf(ctx, h)
		if err != nil {
			return chosen{}, false, err
		}
		if fw == nil {
			s.Report.Note("%s: no active firewall front end and no nft: nothing to configure", h)
			return chosen{}, false, nil
		}
		d, err := p.desiredFor(h)
		return chosen{fw, d}, err == nil, err
	})
	for h, c := range found {
		p.fronts[h], p.desired[h] = c.fw, c.desired
	}
	return err
}

// desiredFor is what host h's firewall must allow.
func (p *UpdateFirewall) desiredFor(h *node.Host) (firewall.Desired, error) {
	s := p.state
	cfg := engine.HostConfig(s.Cluster, s.Distro, h.Spec)
	d := firewall.Desired{Interface: h.Facts.PrivateInterface}
	for _, peer := range s.Hosts {
		if peer != h && peer.Facts.PrivateAddress != "" {
			d.Peers = append(d.Peers, peer.Facts.PrivateAddress)
		}
	}
	nw, err := s.Engine.Network(cfg)
	if err != nil {
		return d, fmt.Errorf("the engine's networks: %w", err)
	}
	d.CIDRs = append(append(d.CIDRs, nw.PodCIDRs...), nw.ServiceCIDRs...)
	ports, err := s.Engine.Ports(h.IsController(), cfg)
	if err != nil {
		return d, fmt.Errorf("the engine's ports: %w", err)
	}
	d.Ports = append(d.Ports, ports...)
	if fw := s.Cluster.Spec.Config.Firewall; fw != nil {
		d.Ports = append(d.Ports, fw.Ports...)
		d.Rules = append(d.Rules, fw.Rules...)
	}
	d.Ports = append(d.Ports, h.Spec.Ports...)
	if h.Spec.Firewall != nil {
		d.Rules = append(d.Rules, h.Spec.Firewall.Rules...)
	}
	return d, nil
}

func (p *UpdateFirewall) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { return p.fronts[h] != nil })
}

// ShouldRun implements Conditional.
func (p *UpdateFirewall) ShouldRun() bool { return len(p.fronts) > 0 }

// Plan implements Planner.
func (p *UpdateFirewall) Plan(ctx context.Context) ([]node.Change, error) {
	return node.Collect(ctx, p.hosts(), p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		pl, err := p.fronts[h].Plan(ctx, h.Conn, p.desired[h])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.fronts[h].Name(), err)
		}
		var out []node.Change
		for _, a := range pl.Actions {
			out = append(out, node.Change{Host: h.String(), What: p.fronts[h].Name() + ": " + a.Summary})
		}
		return out, nil
	})
}

// Run implements Phase.
func (p *UpdateFirewall) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		fw := p.fronts[h]
		done, err := fw.Apply(ctx, h.Conn, p.desired[h])
		if err != nil {
			return fmt.Errorf("%s: %w", fw.Name(), err)
		}
		for _, a := range done.Actions {
			s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: fw.Name() + ": " + a.Summary})
		}
		for _, w := range done.Warnings {
			s.Logger().Warn(w, "host", h.String(), "firewall", fw.Name())
		}
		return nil
	})
}

// FrontEnd names the front end the phase chose for h, "" when none.
func (p *UpdateFirewall) FrontEnd(h *node.Host) string {
	if fw := p.fronts[h]; fw != nil {
		return fw.Name()
	}
	return ""
}
