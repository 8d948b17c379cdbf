package node

import (
	"bytes"
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// Repoint is one staying node whose engine config must change because a
// reset removes the server it joined through, or the cluster's first
// server: Config is its new content.
type Repoint struct {
	Host *Host
	// Join is the server the node joins through from now on; "" makes it
	// the cluster's first server.
	Join   string
	Config []byte
}

// What says what the repoint does, for the report.
func (r Repoint) What() string {
	if r.Join == "" {
		return "become the cluster's first server (no server: line)"
	}
	return "join through " + r.Join
}

// PlanRepoint reads the survivors' engine configs and works out which
// change: every survivor that names a removed host in server: joins
// through the new first server instead, and when the first server itself
// leaves, the new first drops its server: line. Nothing is written. An
// engine whose nodes name no server (kubeadm) needs none.
func (s *Fleet) PlanRepoint(ctx context.Context, p ResetPlan) ([]Repoint, error) {
	rp, ok := s.Engine.(engine.Repointer)
	if !ok || p.Whole || p.NewFirst == nil {
		return nil, nil
	}
	removed := map[string]bool{}
	for _, h := range p.Targets {
		for _, name := range []string{h.Spec.Hostname, h.NodeName(), h.Spec.Address(), h.Spec.PrivateAddress, h.Facts.PrivateAddress, h.Facts.FQDN} {
			if name != "" {
				removed[name] = true
			}
		}
	}
	newAddr := p.NewFirst.EffectiveSpec().PrivateAddress
	var out []Repoint
	for _, h := range append(Hosts{p.NewFirst}, p.Survivors.Filter(func(h *Host) bool { return h != p.NewFirst })...) {
		if !h.EngineRunning || h.Conn == nil {
			continue
		}
		join := newAddr
		switch {
		case h == p.NewFirst && (p.FirstLeaves || removed[h.JoinsThrough]):
			join = ""
		case h == p.NewFirst, !removed[h.JoinsThrough]:
			continue
		}
		cfg, err := host.ReadFile(ctx, h.Conn, s.Engine.Paths().Config)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		next, err := rp.Repoint(cfg, join, h.IsController())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		if !bytes.Equal(cfg, next) {
			out = append(out, Repoint{Host: h, Join: join, Config: next})
		}
	}
	return out, nil
}

// ApplyRepoint rewrites one survivor's config and restarts its engine
// around the write (drained, stopped, written, started, waited Ready,
// uncordoned): server: is read only at start.
func (s *Fleet) ApplyRepoint(ctx context.Context, r Repoint, phaseTitle string) error {
	h := r.Host
	err := s.Restart(ctx, h, "", func(ctx context.Context) error {
		_, err := host.WriteFile(ctx, h.Conn, s.Engine.Paths().Config, r.Config, 0, "")
		return err
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	h.JoinsThrough = r.Join
	s.mu.Unlock()
	s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: "restarted to " + r.What()})
	return nil
}
