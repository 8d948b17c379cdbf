package phase

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Timings for waiting on nodes. A node that does not get Ready in
// readyTimeout fails the phase with its journal rather than hanging.
const (
	readyTimeout = 5 * time.Minute
	readyPoll    = 2 * time.Second
	drainTimeout = 5 * time.Minute
)

// Kubectl runs kubectl through the leader's engine (as root: the admin
// kubeconfig is root's). The token never reaches kubectl's arguments.
func (s *State) Kubectl(ctx context.Context, args ...string) (string, error) {
	h := s.kubectlHost()
	if h == nil {
		return "", fmt.Errorf("no controller runs %s to drive kubectl through", s.Engine.Name())
	}
	out, err := h.Conn.Sudo(ctx, s.Engine.Kubectl(args...))
	if err != nil {
		return "", fmt.Errorf("%s: kubectl %s: %w", h, strings.Join(args, " "), err)
	}
	return out, nil
}

// node returns one cluster node by name, or nil when the cluster has none
// of that name.
func (s *State) node(ctx context.Context, name string) (*Node, error) {
	nodes, err := s.ClusterNodes(ctx)
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i], nil
		}
	}
	return nil, nil
}

// WaitReady waits until the node registers and reports Ready, and, when
// version is set, runs that kubelet version. On timeout it returns the
// tail of the host's engine journal: the real reason is there.
func (s *State) WaitReady(ctx context.Context, h *Host, version string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	name := h.NodeName()
	var last string
	for {
		n, err := s.node(ctx, name)
		switch {
		case err != nil:
			last = err.Error()
		case n == nil:
			last = "not registered"
		case !n.Ready:
			last = "registered, not Ready"
		case version != "" && !sameVersion(n.KubeletVersion, version):
			last = "Ready at " + n.KubeletVersion + ", waiting for " + version
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s did not get Ready in %s (%s); its journal:\n%s", name, readyTimeout, last, s.journal(h))
		case <-time.After(readyPoll):
		}
	}
}

// sameVersion compares an engine version as the kubelet reports it
// (v1.35.4+k3s1) with one as a definition writes it (1.35.4-k3s1).
func sameVersion(a, b string) bool {
	va, err1 := engine.ParseVersion(a)
	vb, err2 := engine.ParseVersion(b)
	return err1 == nil && err2 == nil && engine.Compare(va, vb) == 0
}

// journal is the tail of the engine's journal on h, for failure messages.
func (s *State) journal(h *Host) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := h.Conn.Sudo(ctx, shell.Join("journalctl", "--no-pager", "-n", "40", "-u", s.Engine.Service(h.IsController())))
	if err != nil {
		return "(no journal: " + err.Error() + ")"
	}
	return out
}

// StartEngine starts the node's services (without blocking: the units have
// no start timeout) and enables them at boot.
func (s *State) StartEngine(ctx context.Context, h *Host) error {
	if err := daemonReload(ctx, h); err != nil {
		return err
	}
	if _, err := h.Conn.Sudo(ctx, s.Engine.EnableCommand(h.IsController())); err != nil {
		return fmt.Errorf("enabling %s: %w", s.Engine.Service(h.IsController()), err)
	}
	if _, err := h.Conn.Sudo(ctx, s.Engine.StartCommand(h.IsController())); err != nil {
		return fmt.Errorf("starting %s: %w", s.Engine.Service(h.IsController()), err)
	}
	return nil
}

// StopEngine stops the node's main service.
func (s *State) StopEngine(ctx context.Context, h *Host) error {
	if _, err := h.Conn.Sudo(ctx, s.Engine.StopCommand(h.IsController())); err != nil {
		return fmt.Errorf("stopping %s: %w", s.Engine.Service(h.IsController()), err)
	}
	return nil
}

// Cordon marks a node unschedulable.
func (s *State) Cordon(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "cordon", node)
	return err
}

// Uncordon marks a node schedulable again.
func (s *State) Uncordon(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "uncordon", node)
	return err
}

// Drain evicts the node's pods through the eviction API, which honours
// PodDisruptionBudgets (the earlier tool deleted pods with
// --disable-eviction).
func (s *State) Drain(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
		"--timeout="+drainTimeout.String())
	return err
}

// Restart drains a running node, stops its engine, runs change, starts it,
// waits for it to be Ready (at version, when set) and uncordons it: the
// one path every phase that must restart a node takes.
func (s *State) Restart(ctx context.Context, h *Host, version string, change func(context.Context) error) error {
	name := h.NodeName()
	if h.IsController() {
		s.mu.Lock()
		s.restarting = h
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.restarting = nil
			s.mu.Unlock()
		}()
	}
	if err := s.Cordon(ctx, name); err != nil {
		return err
	}
	if err := s.Drain(ctx, name); err != nil {
		return err
	}
	if err := s.StopEngine(ctx, h); err != nil {
		return err
	}
	if err := change(ctx); err != nil {
		return err
	}
	if err := s.StartEngine(ctx, h); err != nil {
		return err
	}
	if err := s.WaitReady(ctx, h, version); err != nil {
		return err
	}
	return s.Uncordon(ctx, name)
}

var _ host.Runner = (*host.Conn)(nil)
