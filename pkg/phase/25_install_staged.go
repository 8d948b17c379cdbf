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

// Plan implements Planner. In a dry run the upload phases queued the
// package files that would wait (their plans list only the uploads), and
// no phase before this one installed them, so the plan leaves out the
// hosts an earlier phase would have taken: a host whose engine does not
// run is Initialize's (its plan says it installs the engine), one that
// awaits its upgrade keeps them for the upgrade phases. Staged executables
// are listed when they were queued; a dry run queues none.
func (p *InstallStaged) Plan(ctx context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.hosts() {
		if !h.EngineRunning || p.state.AwaitsUpgrade(h) {
			continue
		}
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
