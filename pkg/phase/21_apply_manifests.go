package phase

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// manifestsDir holds the raw manifests on the leader, and beside each the
// sha256 last applied.
var manifestsDir = path.Join(node.StateDir, "manifests")

// ApplyManifests applies the package's raw manifests (a CNI, typically)
// from the leader with the engine's own kubectl. A manifest already applied
// at that content is not applied again.
type ApplyManifests struct {
	base
	manifests []pkgfile.Entry
}

// Title implements Phase.
func (p *ApplyManifests) Title() string { return "Apply manifests" }

// Prepare implements Preparer.
func (p *ApplyManifests) Prepare(_ context.Context) error {
	s := p.state
	p.manifests = s.Package.EntriesOf(pkgfile.KindManifests)
	return nil
}

// ShouldRun implements Conditional.
func (p *ApplyManifests) ShouldRun() bool { return len(p.manifests) > 0 }

func manifestPath(e pkgfile.Entry) string {
	return path.Join(manifestsDir, fmt.Sprintf("%02d-%s", e.Index, path.Base(e.Name)))
}

// pending lists the manifests not applied at their content yet.
func (p *ApplyManifests) pending(ctx context.Context, leader *node.Host) ([]pkgfile.Entry, error) {
	var out []pkgfile.Entry
	for _, e := range p.manifests {
		b, err := host.ReadFile(ctx, leader.Conn, manifestPath(e)+".applied")
		if err != nil || strings.TrimSpace(string(b)) != e.SHA256 {
			out = append(out, e)
		}
	}
	return out, nil
}

// Plan implements Planner: with no engine running yet there is no cluster
// to compare with, so every manifest would be applied.
func (p *ApplyManifests) Plan(ctx context.Context) ([]node.Change, error) {
	leader := p.state.Leader()
	todo := p.manifests
	if leader != nil && leader.EngineRunning {
		var err error
		if todo, err = p.pending(ctx, leader); err != nil {
			return nil, err
		}
	}
	var out []node.Change
	for _, e := range todo {
		out = append(out, node.Change{Host: leader.String(), What: "kubectl apply " + path.Base(e.Name)})
	}
	return out, nil
}

// Run implements Phase.
func (p *ApplyManifests) Run(ctx context.Context) error {
	s := p.state
	leader := s.KubectlHost()
	if leader == nil {
		return fmt.Errorf("no controller runs %s to apply manifests through", s.Engine.Name())
	}
	todo, err := p.pending(ctx, leader)
	if err != nil {
		return err
	}
	for _, e := range todo {
		dst := manifestPath(e)
		pl := s.EntryPlacement(e, dst)
		pl.Staged, pl.Mode = false, 0o600
		if _, err := s.Place(ctx, leader, pl); err != nil {
			return err
		}
		if _, err := s.Kubectl(ctx, "apply", "-f", dst); err != nil {
			return err
		}
		if _, err := host.WriteFile(ctx, leader.Conn, dst+".applied", []byte(e.SHA256+"\n"), 0o600, ""); err != nil {
			return err
		}
		s.Report.Add(node.Change{Host: leader.String(), Phase: p.Title(), What: "applied " + path.Base(e.Name)})
	}
	return p.waitStartedReady(ctx)
}

// waitStartedReady waits for every controller this run started to get
// Ready, when the engine's pod network is among the manifests: phase 20
// waited only for them to register.
func (p *ApplyManifests) waitStartedReady(ctx context.Context) error {
	s := p.state
	if !s.PodNetworkFromManifests() {
		return nil
	}
	started := s.Hosts.Filter(func(h *node.Host) bool { return h.Started && h.IsController() })
	return started.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		if err := s.WaitReady(ctx, h, ""); err != nil {
			return fmt.Errorf("with the manifests applied: %w", err)
		}
		s.Logger().Info("node ready", "host", h.String(), "node", h.NodeName())
		return nil
	})
}
