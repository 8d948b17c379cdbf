package phase

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// ConfigureEngine renders each host's engine files (config, token, registries,
// audit policy, pod security, chart values) and writes them to hosts whose
// engine does not run yet. A running node's config changes only through the
// sync phases, which drain it first.
type ConfigureEngine struct {
	state    *State
	rendered map[*Host]engine.Rendered
}

// Title implements Phase.
func (p *ConfigureEngine) Title() string { return "Configure engine" }

// Prepare implements Preparer: it chooses the leader, finds or makes the
// token, and renders every host's files, reading only.
func (p *ConfigureEngine) Prepare(ctx context.Context, s *State) error {
	p.state = s
	p.rendered = map[*Host]engine.Rendered{}
	r, err := s.RenderAll(ctx, s.Hosts.Filter(func(h *Host) bool { return !h.EngineRunning }))
	if err != nil {
		return err
	}
	p.rendered = r
	return nil
}

// RenderAll renders the engine files of hosts. A kubeadm node that joins
// needs a token only a running leader can make; such hosts are left out
// and rendered when they join.
func (s *State) RenderAll(ctx context.Context, hosts Hosts) (map[*Host]engine.Rendered, error) {
	leader := s.Leader()
	if leader == nil {
		return nil, fmt.Errorf("no controller in the inventory")
	}
	token, err := s.clusterToken(ctx)
	if err != nil {
		return nil, err
	}
	var sec joinSecrets
	if s.Engine.ServerTokenPath() == "" {
		if sec, err = s.kubeadmSecrets(ctx); err != nil {
			return nil, err
		}
		token = sec.token
	}
	passwords, err := s.registryPasswords()
	if err != nil {
		return nil, err
	}
	cluster := s.effectiveCluster()
	leaderSpec := &cluster.Spec.Hosts[leader.Index]
	join := engine.JoinAddress(cluster, leaderSpec, !s.ColdBootstrap() && s.loadbalancerUp(ctx, leader))
	out := map[*Host]engine.Rendered{}
	for _, h := range hosts {
		if token == "" && h != leader {
			continue
		}
		hostJoin := join
		if h.EngineRunning {
			// A joined node keeps the address it joined through: the VIP
			// coming up later is no reason to restart it (phases 26, 27).
			if a := s.joinedThrough(ctx, h); a != "" {
				hostJoin = a
			}
		}
		in := engine.RenderInput{
			Cluster: cluster, Distro: s.Distro, Host: &cluster.Spec.Hosts[h.Index], NodeName: h.NodeName(),
			Leader: leaderSpec, JoinAddress: hostJoin, Token: token, RegistryPasswords: passwords,
			CACertHash: sec.caHash, CertificateKey: sec.certKey,
		}
		r, err := s.Engine.Render(in)
		if err != nil {
			return nil, fmt.Errorf("%s: rendering the %s config: %w", h, s.Engine.Name(), err)
		}
		out[h] = r
	}
	return out, nil
}

// clusterToken is the existing token, or for k3s and rke2 a new one the
// founder starts with; kubeadm makes its own on the founder.
func (s *State) clusterToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.token
	s.mu.Unlock()
	if t != "" {
		return t, nil
	}
	t, err := s.readClusterToken(ctx)
	if err != nil {
		return "", err
	}
	if t == "" && s.Engine.ServerTokenPath() != "" {
		if t, err = newToken(); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	s.token = t
	s.mu.Unlock()
	return t, nil
}

// loadbalancerUp asks the leader whether the load balancer answers on the
// join port; a VIP announced from inside the cluster may not yet.
func (s *State) loadbalancerUp(ctx context.Context, from *Host) bool {
	lb := s.Cluster.Spec.Config.Loadbalancer
	if lb == "" {
		return false
	}
	_, err := from.Conn.Run(ctx, tcpProbe(lb, s.Engine.JoinPort()))
	return err == nil
}

// ShouldRun implements Conditional.
func (p *ConfigureEngine) ShouldRun() bool { return len(p.rendered) > 0 }

// Plan implements Planner.
func (p *ConfigureEngine) Plan(ctx context.Context) ([]Change, error) {
	var mu sync.Mutex
	var out []Change
	err := p.hosts().Parallel(ctx, p.state.Options.Concurrency, func(ctx context.Context, h *Host) error {
		for _, f := range p.rendered[h].Files {
			have, _, err := host.FileSHA256(ctx, h.Conn, f.Path)
			if err != nil {
				return err
			}
			if have != sha256Hex(f.Content) {
				mu.Lock()
				out = append(out, Change{Host: h.String(), What: fmt.Sprintf("write %s (%s)", f.Path, f.Mode)})
				mu.Unlock()
			}
		}
		return nil
	})
	return out, err
}

// Run implements Phase.
func (p *ConfigureEngine) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *Host) error {
		return s.writeRendered(ctx, h, p.Title(), p.rendered[h])
	})
}

func (p *ConfigureEngine) hosts() Hosts {
	return p.state.Hosts.Filter(func(h *Host) bool { _, ok := p.rendered[h]; return ok })
}

// writeRendered writes a host's rendered files; unchanged files are left.
func (s *State) writeRendered(ctx context.Context, h *Host, phaseTitle string, r engine.Rendered) error {
	for _, f := range r.Files {
		changed, err := host.WriteFile(ctx, h.Conn, f.Path, f.Content, f.Mode, "")
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if changed {
			s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: fmt.Sprintf("wrote %s (%s)", f.Path, f.Mode)})
		}
	}
	return nil
}

// serverLine finds the join URL's host in an engine config.
var serverLine = regexp.MustCompile(`(?m)^server:\s*"?https://(\[[^\]]+\]|[^":/\s]+):[0-9]+"?\s*$`)

// joinedThrough is the address a running node's config joins through, ""
// when it names none (the founder) or cannot be read.
func (s *State) joinedThrough(ctx context.Context, h *Host) string {
	b, err := host.ReadFile(ctx, h.Conn, s.Engine.Paths().Config)
	if err != nil {
		return ""
	}
	m := serverLine.FindSubmatch(b)
	if m == nil {
		return ""
	}
	return strings.Trim(string(m[1]), "[]")
}
