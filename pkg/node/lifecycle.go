package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/pkg/retry"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Timings for waiting on nodes. A node that does not get Ready in
// readyTimeout fails the phase with its journal rather than hanging.
const (
	readyTimeout = 5 * time.Minute
	readyPoll    = 2 * time.Second
	drainTimeout = 5 * time.Minute
)

// WaitReady waits until the node registers and reports Ready, and, when
// version is set, runs that kubelet version. On timeout it returns the
// tail of the host's engine journal: the real reason is there.
func (s *Fleet) WaitReady(ctx context.Context, h *Host, version string) error {
	return s.waitNode(ctx, h, "get Ready", func(n *Node) error {
		switch {
		case !n.Ready:
			return errors.New("registered, not Ready")
		case version != "" && !sameVersion(n.KubeletVersion, version):
			return fmt.Errorf("kubelet at %s, waiting for %s", n.KubeletVersion, version)
		}
		return nil
	})
}

// WaitRegistered waits until h's kubelet has registered its node, Ready
// or not: a node of an engine whose pod network comes from the package's
// manifests is NotReady until they are applied (engine.ManifestPodNetwork).
func (s *Fleet) WaitRegistered(ctx context.Context, h *Host) error {
	return s.waitNode(ctx, h, "register", func(*Node) error { return nil })
}

// waitNode polls h's node until it is registered and ok accepts it, for
// readyTimeout; the error says what it did not do (what) and carries the
// tail of the engine's journal.
func (s *Fleet) waitNode(ctx context.Context, h *Host, what string, ok func(*Node) error) error {
	name := h.NodeName()
	err := retry.Do(ctx, retry.Policy{Wait: readyPoll, Timeout: readyTimeout}, func(ctx context.Context) error {
		n, err := s.nodeOnce(ctx, name)
		switch {
		case err != nil:
			return err
		case n == nil:
			return errors.New("not registered")
		}
		return ok(n)
	})
	if err != nil {
		return fmt.Errorf("node %s did not %s in %s (%w); its journal:\n%s", name, what, readyTimeout, err, s.journal(h))
	}
	return nil
}

// PodNetworkFromManifests says the engine's nodes get Ready only once
// phase 21 applies the package's manifests, and the package has some to
// apply: phase 20 then waits for registration and phase 21 for Ready.
func (s *Fleet) PodNetworkFromManifests() bool {
	m, ok := s.Engine.(engine.ManifestPodNetwork)
	return ok && m.PodNetworkFromManifests() && s.Package != nil && len(s.Package.EntriesOf(pkgfile.KindManifests)) > 0
}

// sameVersion compares an engine version as the kubelet reports it
// (v1.35.4+k3s1) with one as a definition writes it (1.35.4-k3s1).
func sameVersion(a, b string) bool {
	va, err1 := engine.ParseVersion(a)
	vb, err2 := engine.ParseVersion(b)
	return err1 == nil && err2 == nil && engine.Compare(va, vb) == 0
}

// journal is the tail of the engine's journal on h, for failure messages.
func (s *Fleet) journal(h *Host) string {
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
func (s *Fleet) StartEngine(ctx context.Context, h *Host) error {
	if err := DaemonReload(ctx, h); err != nil {
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
func (s *Fleet) StopEngine(ctx context.Context, h *Host) error {
	if _, err := h.Conn.Sudo(ctx, s.Engine.StopCommand(h.IsController())); err != nil {
		return fmt.Errorf("stopping %s: %w", s.Engine.Service(h.IsController()), err)
	}
	return nil
}

// Cordon marks a node unschedulable.
func (s *Fleet) Cordon(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "cordon", node)
	return err
}

// Uncordon marks a node schedulable again.
func (s *Fleet) Uncordon(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "uncordon", node)
	return err
}

// Drain evicts the node's pods through the eviction API, which honours
// PodDisruptionBudgets (the earlier tool deleted pods with
// --disable-eviction).
func (s *Fleet) Drain(ctx context.Context, node string) error {
	_, err := s.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
		"--timeout="+drainTimeout.String())
	return err
}

// Restart drains a running node, stops its engine, runs change, starts it,
// waits for it to be Ready (at version, when set) and uncordons it: the
// one path every phase that must restart a node takes.
func (s *Fleet) Restart(ctx context.Context, h *Host, version string, change func(context.Context) error) error {
	return s.drained(ctx, h, version, func(ctx context.Context) error {
		if err := s.StopEngine(ctx, h); err != nil {
			return err
		}
		if err := change(ctx); err != nil {
			return err
		}
		return s.StartEngine(ctx, h)
	})
}

// drained cordons and drains a running node, runs work, waits for the node
// to be Ready (at version, when set) and, on a kubeadm controller, for its
// control plane to settle, and uncordons it. kubectl avoids a
// controller while it is drained.
func (s *Fleet) drained(ctx context.Context, h *Host, version string, work func(context.Context) error) error {
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
	if err := work(ctx); err != nil {
		return err
	}
	if err := s.WaitReady(ctx, h, version); err != nil {
		return err
	}
	// A kubeadm controller's static pods may restart after its kubelet
	// does, and the next kubectl call would meet their restart.
	if u, ok := s.Engine.(engine.KubeadmUpgrader); ok && h.IsController() {
		if err := s.waitControlPlaneSettled(ctx, h, u); err != nil {
			return err
		}
	}
	return s.Uncordon(ctx, name)
}

var _ host.Runner = (*host.Conn)(nil)

// RanBefore says h's engine ran before this run and this run leaves it as
// it was: not started, not upgraded (Started), and not waiting for an
// upgrade, which in a dry run is only planned.
func (s *Fleet) RanBefore(h *Host) bool {
	if !h.EngineRunning || h.Started || h.Conn == nil {
		return false
	}
	have, err1 := engine.ParseVersion(h.EngineVersion)
	want, err2 := engine.ParseVersion(s.Distro.Spec.Version)
	return err1 == nil && err2 == nil && engine.Compare(have, want) >= 0
}

// MarkFounded records that this run founded the cluster: every controller
// it starts joins through the founder, as on any cold bootstrap, even once
// the VIP answers (docs/ha.md, The order); workers join through the VIP.
func (s *Fleet) MarkFounded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.founded = true
}

// MarkStarted records that this run started h's engine, at version when
// it upgraded it: later phases leave the host alone.
func (s *Fleet) MarkStarted(h *Host, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.EngineRunning, h.Started = true, true
	if version != "" {
		h.EngineVersion = version
	}
}
