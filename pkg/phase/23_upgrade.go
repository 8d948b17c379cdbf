package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Upgrade moves hosts of one role class from an older engine version to the
// package's: controllers one at a time (never two down at once), workers in
// batches of --worker-concurrency. A k3s or rke2 node is cordoned, drained,
// stopped, given the new engine, started, waited on until Ready at the new
// version, and uncordoned. A kubeadm node takes kubeadm's sequence
// (node.UpgradeKubeadm): kubeadm upgrade apply on the first controller,
// kubeadm upgrade node on the rest, workers only once every controller is
// done. A node that is not Ready before it starts stops the upgrade rather
// than hanging on it, unless --skip-unready-nodes says to leave such nodes
// for later.
type Upgrade struct {
	controllers bool
	base
	targets node.Hosts
	// apply is the controller that runs kubeadm upgrade apply: the first
	// target, unless a controller already runs the package's version
	// from an earlier run, which upgraded the control plane.
	apply *node.Host
}

// NewUpgradeControllers is phase 23.
func NewUpgradeControllers() *Upgrade { return &Upgrade{controllers: true} }

// NewUpgradeWorkers is phase 24.
func NewUpgradeWorkers() *Upgrade { return &Upgrade{} }

// Title implements Phase.
func (p *Upgrade) Title() string {
	if p.controllers {
		return "Upgrade Controller"
	}
	return "Upgrade Worker"
}

// Prepare implements Preparer: hosts of the class at an older version. A
// downgrade was already refused by phase 5, before anything changed.
func (p *Upgrade) Prepare(ctx context.Context) error {
	s := p.state
	p.targets, p.apply = nil, nil
	want, err := engine.ParseVersion(s.Distro.Spec.Version)
	if err != nil {
		return err
	}
	for _, h := range s.Hosts {
		if h.IsController() != p.controllers || h.EngineVersion == "" || h.Started {
			continue
		}
		have, err := engine.ParseVersion(h.EngineVersion)
		if err != nil {
			return fmt.Errorf("%s: %w", h, err)
		}
		if engine.Compare(have, want) < 0 {
			p.targets = append(p.targets, h)
		}
	}
	if len(p.targets) == 0 {
		return nil
	}
	if err := p.checkReady(ctx); err != nil {
		return err
	}
	if _, kubeadm := s.Engine.(engine.KubeadmUpgrader); kubeadm && len(p.targets) > 0 {
		return p.kubeadmOrder(want)
	}
	return nil
}

// kubeadmOrder picks the controller that runs kubeadm upgrade apply, and
// holds workers back while a controller is older than the package: a
// kubelet must never be newer than an API server (docs/reference/engines.md
// 7.1, KW-SKEW).
func (p *Upgrade) kubeadmOrder(want engine.Version) error {
	s := p.state
	if p.controllers {
		for _, h := range s.Hosts.Controllers() {
			if s.RanBefore(h) {
				return nil // an earlier run applied the upgrade
			}
		}
		p.apply = p.targets[0]
		return nil
	}
	if s.Options.DryRun {
		return nil // phase 23 only planned the controllers
	}
	for _, h := range s.Hosts.Controllers() {
		have, err := engine.ParseVersion(h.EngineVersion)
		if err == nil && engine.Compare(have, want) < 0 {
			return fmt.Errorf("controller %s runs %s %s: kubeadm workers are upgraded after every controller, as a kubelet may not be newer than the API server", h, s.Engine.Name(), h.EngineVersion)
		}
	}
	return nil
}

// checkReady refuses to start when a node to upgrade is down: draining the
// rest around a dead node is how an upgrade hangs.
func (p *Upgrade) checkReady(ctx context.Context) error {
	s := p.state
	nodes, err := s.ClusterNodes(ctx)
	if err != nil {
		return err
	}
	ready := map[string]bool{}
	for _, n := range nodes {
		ready[n.Name] = n.Ready
	}
	var keep node.Hosts
	for _, h := range p.targets {
		if ready[h.NodeName()] {
			keep = append(keep, h)
			continue
		}
		if !s.Options.SkipUnready {
			return fmt.Errorf("node %s is not Ready: fix it, or pass --skip-unready-nodes to upgrade the others and leave it", h.NodeName())
		}
		s.Report.Note("%s: not Ready, left at %s (--skip-unready-nodes)", h, h.EngineVersion)
	}
	p.targets = keep
	return nil
}

// ShouldRun implements Conditional.
func (p *Upgrade) ShouldRun() bool { return len(p.targets) > 0 }

// Plan implements Planner.
func (p *Upgrade) Plan(context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.targets {
		what := fmt.Sprintf("drain, upgrade %s %s to %s, uncordon", p.state.Engine.Name(), h.EngineVersion, p.state.Distro.Spec.Version)
		if _, kubeadm := p.state.Engine.(engine.KubeadmUpgrader); kubeadm {
			step := "kubeadm upgrade node"
			if h == p.apply {
				step = "kubeadm upgrade apply"
			}
			what = fmt.Sprintf("upgrade %s %s to %s: new kubeadm, %s, drain, kubelet and kubectl, restart the kubelet, uncordon", p.state.Engine.Name(), h.EngineVersion, p.state.Distro.Spec.Version, step)
		}
		out = append(out, node.Change{Host: h.String(), What: what})
	}
	return out, nil
}

// Run implements Phase.
func (p *Upgrade) Run(ctx context.Context) error {
	s := p.state
	if p.controllers {
		return p.targets.Sequential(ctx, p.upgrade)
	}
	return p.targets.Batches(ctx, s.Options.WorkerConcurrency, p.upgrade)
}

func (p *Upgrade) upgrade(ctx context.Context, h *node.Host) error {
	s := p.state
	from := h.EngineVersion
	var err error
	if _, kubeadm := s.Engine.(engine.KubeadmUpgrader); kubeadm {
		err = s.UpgradeKubeadm(ctx, h, h == p.apply, p.Title())
	} else {
		err = s.Restart(ctx, h, s.Distro.Spec.Version, func(ctx context.Context) error {
			return s.InstallUpgrade(ctx, h, p.Title(), nil)
		})
	}
	if err != nil {
		return err
	}
	s.MarkStarted(h, s.Distro.Spec.Version)
	s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: fmt.Sprintf("upgraded %s %s to %s", s.Engine.Name(), from, s.Distro.Spec.Version)})
	return nil
}
