package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// RenderAll renders the engine files of hosts. A kubeadm node that joins
// needs a token only a running leader can make; such hosts are left out
// and rendered when they join.
func (s *Fleet) RenderAll(ctx context.Context, hosts Hosts) (map[*Host]engine.Rendered, error) {
	leader := s.Leader()
	if leader == nil {
		return nil, fmt.Errorf("no controller in the inventory")
	}
	token, err := s.ClusterToken(ctx)
	if err != nil {
		return nil, err
	}
	var sec joinSecrets
	if s.Engine.ServerTokenPath() == "" {
		if sec, err = s.KubeadmSecrets(ctx); err != nil {
			return nil, err
		}
		token = sec.token
	}
	passwords, err := s.RegistryPasswords()
	if err != nil {
		return nil, err
	}
	cluster := s.EffectiveCluster()
	leaderSpec := &cluster.Spec.Hosts[leader.Index]
	lbUp := !s.ColdBootstrap() && s.LoadbalancerUp(ctx, leader)
	s.mu.Lock()
	founded := s.founded
	s.mu.Unlock()
	out := map[*Host]engine.Rendered{}
	for _, h := range hosts {
		if token == "" && h != leader {
			continue
		}
		hostJoin := engine.JoinAddress(cluster, leaderSpec, lbUp && (!founded || !h.IsController()))
		if h.EngineRunning {
			// A joined node keeps the address it joined through: the VIP
			// coming up later is no reason to restart it (phases 26, 27).
			if a := s.JoinedThrough(ctx, h); a != "" {
				hostJoin = a
			}
		}
		in := engine.RenderInput{
			Cluster: cluster, Distro: s.Distro, Host: &cluster.Spec.Hosts[h.Index], NodeName: h.NodeName(),
			Leader: leaderSpec, JoinAddress: hostJoin, Token: token, RegistryPasswords: passwords,
			CACertHash: sec.caHash, CertificateKey: sec.certKey, ClusterExists: !s.ColdBootstrap(),
		}
		r, err := s.Engine.Render(in)
		if err != nil {
			return nil, fmt.Errorf("%s: rendering the %s config: %w", h, s.Engine.Name(), err)
		}
		out[h] = r
	}
	return out, nil
}

// ClusterToken is the existing token, or for k3s and rke2 a new one the
// founder starts with; kubeadm makes its own on the founder.
func (s *Fleet) ClusterToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.token
	s.mu.Unlock()
	if t != "" {
		return t, nil
	}
	t, err := s.ReadClusterToken(ctx)
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

// LoadbalancerUp asks the leader whether the load balancer answers on the
// join port; a VIP announced from inside the cluster may not yet.
func (s *Fleet) LoadbalancerUp(ctx context.Context, from *Host) bool {
	lb := s.Cluster.Spec.Config.Loadbalancer
	if lb == "" {
		return false
	}
	return s.Answers(ctx, from, lb, s.Engine.JoinPort())
}

// Answers says addr:port accepts a TCP connection from the host from.
func (s *Fleet) Answers(ctx context.Context, from *Host, addr string, port int) bool {
	_, err := from.Conn.Run(ctx, tcpProbe(addr, port))
	return err == nil
}

// Live says something at addr:port answers from the host from: it
// accepts a TCP connection, or refuses it, as a load balancer passing
// connections on to an API server that does not run yet does
// (docs/reference/engines.md 8, KW-HA). A timeout or no route is not
// live; why is the error.
func (s *Fleet) Live(ctx context.Context, from *Host, addr string, port int) error {
	out, err := from.Conn.Run(ctx, tcpLiveProbe(addr, port))
	switch strings.TrimSpace(out) {
	case "open", "refused":
		return nil
	}
	if why := strings.TrimSpace(out); why != "" {
		return fmt.Errorf("%s", why)
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("no answer in 3s")
}

// RenderedFor renders a host's engine files now: after the founder is up
// the cluster's own token can be read (kubeadm makes one only then).
func (s *Fleet) RenderedFor(ctx context.Context, h *Host) (engine.Rendered, error) {
	r, err := s.RenderAll(ctx, Hosts{h})
	if err != nil {
		return engine.Rendered{}, err
	}
	out, ok := r[h]
	if !ok {
		return engine.Rendered{}, fmt.Errorf("%s: no join token yet: the founder is not running", h)
	}
	return out, nil
}

// WriteRendered writes a host's rendered files; unchanged files are left.
func (s *Fleet) WriteRendered(ctx context.Context, h *Host, phaseTitle string, r engine.Rendered) error {
	// one round trip for every file's probe on a host that has them all
	var probes []string
	for _, f := range r.Files {
		probes = append(probes, host.WriteFileProbe(f.Path))
	}
	conn := host.Prefetch(ctx, h.Conn, probes)
	for _, f := range r.Files {
		changed, err := host.WriteFile(ctx, conn, f.Path, f.Content, f.Mode, "")
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if changed {
			s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: fmt.Sprintf("wrote %s (%s)", f.Path, f.Mode)})
		}
		if f.Path == s.Engine.Paths().Config {
			s.mu.Lock()
			h.JoinsThrough = engine.ServerOf(f.Content)
			s.mu.Unlock()
		}
	}
	return nil
}

// JoinedThrough is the address a running node's config joins through, ""
// when it names none (the founder) or cannot be read.
func (s *Fleet) JoinedThrough(ctx context.Context, h *Host) string {
	b, err := host.ReadFile(ctx, h.Conn, s.Engine.Paths().Config)
	if err != nil {
		return ""
	}
	return engine.ServerOf(b)
}

// EffectiveSpec is a host's inventory entry with what facts discovered
// filled in, so rendering never sees an empty node name or address.
func (h *Host) EffectiveSpec() *v1alpha1.Host {
	c := *h.Spec
	c.Hostname = h.NodeName()
	if c.PrivateAddress == "" {
		c.PrivateAddress = h.Facts.PrivateAddress
	}
	if c.PrivateInterface == "" {
		c.PrivateInterface = h.Facts.PrivateInterface
	}
	return &c
}

// EffectiveCluster is the inventory with every host's effective spec.
func (s *Fleet) EffectiveCluster() *v1alpha1.Cluster {
	c := *s.Cluster
	c.Spec.Hosts = make([]v1alpha1.Host, len(s.Hosts))
	for i, h := range s.Hosts {
		c.Spec.Hosts[i] = *h.EffectiveSpec()
	}
	return &c
}

// tcpLiveProbe prints "open" when host:port accepts a TCP connection in 3 s,
// "refused" when it refuses one, and otherwise why not, failing.
func tcpLiveProbe(addr string, port int) string {
	script := `if command -v bash >/dev/null 2>&1; then ` +
		`out=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1) && { echo open; exit 0; }; ` +
		`case "$out" in *[Rr]efused*) echo refused; exit 0;; esac; echo "${out:-no answer in 3s}"; exit 1; ` +
		`else python3 -c 'import socket,sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), 3); print("open")
except ConnectionRefusedError:
    print("refused")
except Exception as e:
    print(e); sys.exit(1)' "$1" "$2"; fi`
	return host.Script(script, addr, strconv.Itoa(port))
}

// tcpProbe succeeds when host:port accepts a TCP connection within 3 s.
// It needs bash (for /dev/tcp) or python3, one of which every supported
// host has.
func tcpProbe(addr string, port int) string {
	script := `if command -v bash >/dev/null 2>&1; then timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2"; ` +
		`else python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)' "$1" "$2"; fi`
	return host.Script(script, addr, strconv.Itoa(port))
}
