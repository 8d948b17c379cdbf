package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// ConfigureEngine renders each host's engine files (config, token, registries,
// audit policy, pod security, chart values) and writes them to hosts whose
// engine does not run yet. A running node's config changes only through the
// sync phases, which drain it first.
type ConfigureEngine struct {
	base
	rendered map[*node.Host]engine.Rendered
}

// Title implements Phase.
func (p *ConfigureEngine) Title() string { return "Configure engine" }

// Prepare implements Preparer: it chooses the leader, finds or makes the
// token, and renders every host's files, reading only.
func (p *ConfigureEngine) Prepare(ctx context.Context) error {
	s := p.state
	p.rendered = map[*node.Host]engine.Rendered{}
	r, err := s.RenderAll(ctx, s.Hosts.Filter(func(h *node.Host) bool { return !h.EngineRunning }))
	if err != nil {
		return err
	}
	p.rendered = r
	return nil
}

// ShouldRun implements Conditional.
func (p *ConfigureEngine) ShouldRun() bool { return len(p.rendered) > 0 }

// Plan implements Planner.
func (p *ConfigureEngine) Plan(ctx context.Context) ([]node.Change, error) {
	return node.Collect(ctx, p.hosts(), p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		var out []node.Change
		var reads []string
		for _, f := range p.rendered[h].Files {
			reads = append(reads, host.FileSHA256Command(f.Path))
		}
		conn := host.Prefetch(ctx, h.Conn, reads) // one round trip for all
		for _, f := range p.rendered[h].Files {
			have, _, err := host.FileSHA256(ctx, conn, f.Path)
			if err != nil {
				return out, err
			}
			if have != sha256Hex(f.Content) {
				out = append(out, node.Change{Host: h.String(), What: fmt.Sprintf("write %s (%s)", f.Path, f.Mode)})
			}
		}
		return out, nil
	})
}

// Run implements Phase.
func (p *ConfigureEngine) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		return s.WriteRendered(ctx, h, p.Title(), p.rendered[h])
	})
}

func (p *ConfigureEngine) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { _, ok := p.rendered[h]; return ok })
}
