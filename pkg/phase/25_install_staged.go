package phase

import (
	"context"
	"fmt"
	"path"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// InstallStaged installs what the upload phases left waiting on any host
// the initialize and upgrade phases did not install: package files through
// the host's package manager (from the uploaded files only, never a
// repository), then staged executables moved into place.
type InstallStaged struct {
	base
}

// Title implements Phase.
func (p *InstallStaged) Title() string { return "Install staged files" }

func (p *InstallStaged) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { return len(h.Staged) > 0 || len(h.Packages) > 0 })
}

// ShouldRun implements Conditional.
func (p *InstallStaged) ShouldRun() bool { return len(p.hosts()) > 0 }

// Plan implements Planner. In a dry run nothing was uploaded, so the plan
// is what the upload phases would leave waiting: it is known only when
// they found the files already on the host.
func (p *InstallStaged) Plan(ctx context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.hosts() {
		for _, f := range h.Staged {
			out = append(out, node.Change{Host: h.String(), What: "install " + f.Target})
		}
		missing, err := p.state.PackagesMissing(ctx, h, h.Packages)
		if err != nil {
			return nil, err
		}
		for _, m := range missing {
			out = append(out, node.Change{Host: h.String(), What: "install package " + path.Base(m)})
		}
	}
	return out, nil
}

// Run implements Phase.
func (p *InstallStaged) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		if err := s.InstallPending(ctx, h, p.Title()); err != nil {
			return fmt.Errorf("installing staged files: %w", err)
		}
		return nil
	})
}
