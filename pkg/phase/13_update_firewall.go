package phase

import (
	"context"
	"fmt"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/firewall"
)

// UpdateFirewall configures each host's firewall front end (with
// --update-firewall): it trusts every other node and the engine's pod and
// service CIDRs, opens the engine's ports and the configured ones, and
// applies the configured rules.
type UpdateFirewall struct {
	state   *State
	fronts  map[*Host]firewall.Firewall
	desired map[*Host]firewall.Desired
}

// Title implements Phase.
func (p *UpdateFirewall) Title() string { return "Updating hosts firewall" }

// Prepare implements Preparer: it detects each host's front end and works
// out what the cluster needs from it, reading only.
func (p *UpdateFirewall) Prepare(ctx context.Context, s *State) error {
	p.state = s
	p.fronts, p.desired = map[*Host]firewall.Firewall{}, map[*Host]firewall.Desired{}
	if !s.Options.UpdateFirewall {
		return nil
	}
	var mu sync.Mutex
	return s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *Host) error {
		found, err := firewall.DetectAll(ctx, h.Conn)
		if err != nil {
			return fmt.Errorf("detecting the firewall: %w", err)
		}
		fw, err := firewall.Choose(h.OS, found)
		if err != nil {
			return err
		}
		if fw == nil {
			s.Report.Note("%s: no active firewall front end and no nft: nothing to configure", h)
			return nil
		}
		d, err := p.desiredFor(h)
		if err != nil {
			return err
		}
		mu.Lock()
		p.fronts[h], p.desired[h] = fw, d
		mu.Unlock()
		return nil
	})
}

// desiredFor is what host h's firewall must allow.
func (p *UpdateFirewall) desiredFor(h *Host) (firewall.Desired, error) {
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

func (p *UpdateFirewall) hosts() Hosts {
	return p.state.Hosts.Filter(func(h *Host) bool { return p.fronts[h] != nil })
}

// ShouldRun implements Conditional.
func (p *UpdateFirewall) ShouldRun() bool { return len(p.fronts) > 0 }

// Plan implements Planner.
func (p *UpdateFirewall) Plan(ctx context.Context) ([]Change, error) {
	var mu sync.Mutex
	var out []Change
	err := p.hosts().Parallel(ctx, p.state.Options.Concurrency, func(ctx context.Context, h *Host) error {
		pl, err := p.fronts[h].Plan(ctx, h.Conn, p.desired[h])
		if err != nil {
			return fmt.Errorf("%s: %w", p.fronts[h].Name(), err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range pl.Actions {
			out = append(out, Change{Host: h.String(), What: p.fronts[h].Name() + ": " + a.Summary})
		}
		return nil
	})
	return out, err
}

// Run implements Phase.
func (p *UpdateFirewall) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *Host) error {
		fw := p.fronts[h]
		done, err := fw.Apply(ctx, h.Conn, p.desired[h])
		if err != nil {
			return fmt.Errorf("%s: %w", fw.Name(), err)
		}
		for _, a := range done.Actions {
			s.Report.Add(Change{Host: h.String(), Phase: p.Title(), What: fw.Name() + ": " + a.Summary})
		}
		for _, w := range done.Warnings {
			s.logger().Warn(w, "host", h.String(), "firewall", fw.Name())
		}
		return nil
	})
}

// FrontEnd names the front end the phase chose for h, "" when none.
func (p *UpdateFirewall) FrontEnd(h *Host) string {
	if fw := p.fronts[h]; fw != nil {
		return fw.Name()
	}
	return ""
}
