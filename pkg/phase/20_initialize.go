package phase

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Initialize starts the engine on hosts of one role class where it does not
// run: controllers one at a time, the founder first, each waited on until
// Ready (registered, for an engine whose pod network phase 21 applies);
// workers in batches of --worker-concurrency, hosts with their own
// profile (infra) batched and reported separately.
type Initialize struct {
	controllers bool
	base
	targets node.Hosts
}

// NewInitializeControllers is phase 20.
func NewInitializeControllers() *Initialize { return &Initialize{controllers: true} }

// NewInitializeWorkers is phase 22.
func NewInitializeWorkers() *Initialize { return &Initialize{} }

// Title implements Phase.
func (p *Initialize) Title() string {
	if p.controllers {
		return "Initialize Controller"
	}
	return "Initialize Worker"
}

// Prepare implements Preparer: the hosts of the class whose engine does not
// run, the founder first.
func (p *Initialize) Prepare(ctx context.Context) error {
	s := p.state
	p.targets = nil
	for _, h := range s.Hosts {
		if h.IsController() == p.controllers && !h.EngineRunning {
			p.targets = append(p.targets, h)
		}
	}
	if p.controllers {
		leader := s.Leader()
		sort.SliceStable(p.targets, func(i, j int) bool { return p.targets[i] == leader && p.targets[j] != leader })
		if len(p.targets) > 0 && p.targets[0] == leader && s.ColdBootstrap() {
			return p.checkEndpoint(ctx, leader)
		}
	}
	return nil
}

// checkEndpoint refuses a cold bootstrap whose fixed control-plane endpoint
// (kubeadm's controlPlaneEndpoint) does not answer from the founder:
// kubeadm init writes every kubeconfig against it and joining nodes
// bootstrap through it, so "join through the founder until the VIP
// answers" cannot hold (docs/reference/engines.md 8). A refused
// connection is an answer: a load balancer passes it on to an API server
// that is not up yet. The founder's own address always will answer.
func (p *Initialize) checkEndpoint(ctx context.Context, founder *node.Host) error {
	s := p.state
	fe, ok := s.Engine.(engine.FixedEndpoint)
	if !ok || founder.Conn == nil {
		return nil
	}
	spec := founder.EffectiveSpec()
	ep := fe.ControlPlaneEndpoint(s.EffectiveCluster(), spec)
	for _, own := range []string{spec.PrivateAddress, founder.Spec.Address(), founder.NodeName(), founder.Facts.FQDN} {
		if own != "" && strings.EqualFold(ep, own) {
			return nil
		}
	}
	if v := s.Cluster.Spec.Config.VIP; v != nil && strings.EqualFold(ep, v.IP()) {
		// cargoship brings this address up itself, on the founder, as soon
		// as its API server answers (docs/ha.md): it cannot answer before.
		s.Logger().Info("the control-plane endpoint is the cluster's VIP: it comes up with the founder's API server", "vip", ep, "provider", v.ProviderName())
		return nil
	}
	err := s.Live(ctx, founder, ep, s.Engine.APIPort())
	if err == nil {
		return nil
	}
	return fmt.Errorf("the control-plane endpoint %s:%d (spec.config.loadbalancer) does not answer from the founder %s (%s): %v. "+
		"kubeadm init writes every kubeconfig against it and joining nodes bootstrap through it, so no node could join. "+
		"Point spec.config.loadbalancer at a load balancer that already forwards port %d to %s, or leave it unset to use %s's own address",
		ep, s.Engine.APIPort(), founder, spec.PrivateAddress, err, s.Engine.APIPort(), spec.PrivateAddress, founder)
}

// ShouldRun implements Conditional.
func (p *Initialize) ShouldRun() bool { return len(p.targets) > 0 }

// Plan implements Planner.
func (p *Initialize) Plan(context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.targets {
		out = append(out, node.Change{Host: h.String(), What: p.describe(h)})
	}
	return out, nil
}

func (p *Initialize) describe(h *node.Host) string {
	s := p.state
	switch {
	case h == s.Leader() && s.ColdBootstrap():
		return fmt.Sprintf("install %s %s and found the cluster", s.Engine.Name(), s.Distro.Spec.Version)
	case p.controllers:
		return fmt.Sprintf("install %s %s and join as a controller", s.Engine.Name(), s.Distro.Spec.Version)
	}
	return fmt.Sprintf("install %s %s and join as a worker (profile %s)", s.Engine.Name(), s.Distro.Spec.Version, h.Spec.Profile)
}

// Run implements Phase.
func (p *Initialize) Run(ctx context.Context) error {
	s := p.state
	if p.controllers {
		return p.targets.Sequential(ctx, func(ctx context.Context, h *node.Host) error { return p.start(ctx, h) })
	}
	for _, group := range byProfile(p.targets) {
		s.Logger().Info("starting agents", "profile", group[0].Spec.Profile, "hosts", group.Names(), "batch", s.Options.WorkerConcurrency)
		if err := group.Batches(ctx, s.Options.WorkerConcurrency, p.start); err != nil {
			return err
		}
	}
	return nil
}

// start installs, configures and starts one node and waits for it.
func (p *Initialize) start(ctx context.Context, h *node.Host) error {
	s := p.state
	what := p.describe(h)
	if err := s.InstallPending(ctx, h, p.Title()); err != nil {
		return err
	}
	r, err := s.RenderedFor(ctx, h)
	if err != nil {
		return err
	}
	if err := s.WriteRendered(ctx, h, p.Title(), r); err != nil {
		return err
	}
	for _, cmd := range r.Start {
		if _, err := h.Conn.Sudo(ctx, cmd); err != nil {
			return fmt.Errorf("starting %s: %w", s.Engine.Name(), err)
		}
	}
	founding := s.ColdBootstrap() && h == s.Leader()
	if founding {
		s.MarkFounded()
	}
	s.MarkStarted(h, "")
	wait := s.WaitReady
	if p.controllers && s.PodNetworkFromManifests() {
		// Ready needs the CNI phase 21 applies, after the controllers:
		// registered is as far as a controller gets now (phase 21 waits
		// for Ready). Workers start after phase 21.
		wait = func(ctx context.Context, h *node.Host, _ string) error { return s.WaitRegistered(ctx, h) }
	}
	if err := wait(ctx, h, ""); err != nil {
		return err
	}
	if founding {
		if err := p.afterFounding(ctx, h); err != nil {
			return err
		}
	}
	s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: what})
	s.Logger().Info("node up", "host", h.String(), "node", h.NodeName())
	return nil
}

// afterFounding writes what changes once the cluster exists: kubeadm's
// kube-vip static pod on the founder moves from super-admin.conf to
// admin.conf (docs/reference/kube-vip.md), as every later render has it.
func (p *Initialize) afterFounding(ctx context.Context, h *node.Host) error {
	s := p.state
	r, err := s.RenderedFor(ctx, h)
	if err != nil {
		return err
	}
	f, ok := r.File(engine.KubeVIPStaticPodPath)
	if !ok || s.Engine.Name() != v1alpha1.EngineUpstream {
		return nil
	}
	return s.WriteRendered(ctx, h, p.Title(), engine.Rendered{Files: []engine.File{f}})
}

// byProfile groups workers by profile, plain workers first, so hosts with
// a profile of their own (infra) start as a batch of their own.
func byProfile(hs node.Hosts) []node.Hosts {
	groups := map[string]node.Hosts{}
	var order []string
	for _, h := range hs {
		p := h.Spec.Profile
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], h)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] == v1alpha1.RoleWorker && order[j] != v1alpha1.RoleWorker })
	out := make([]node.Hosts, len(order))
	for i, p := range order {
		out[i] = groups[p]
	}
	return out
}
