package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// UploadFiles uploads the distro-agnostic files to every host: the
// definition's files, the image archive for the host's architecture, and
// the inventory's own files for that host.
type UploadFiles struct {
	base
	plans map[*node.Host][]node.Placement
}

// Title implements Phase.
func (p *UploadFiles) Title() string { return "Upload files to hosts" }

// Prepare implements Preparer: it decides every host's files, reading only.
func (p *UploadFiles) Prepare(_ context.Context) error {
	s := p.state
	p.plans = map[*node.Host][]node.Placement{}
	entries := s.Package.Entries()
	for _, h := range s.Hosts {
		var pls []node.Placement
		for _, e := range commonEntries(entries, h) {
			target := e.Target
			if e.Kind == pkgfile.KindImages {
				target = s.ImagesDir() // a directory entry: the archive goes into it
			}
			pls = append(pls, s.EntryPlacement(e, target))
		}
		for i, f := range h.Spec.Files {
			pl, err := s.HostFilePlacement(h, i, f)
			if err != nil {
				return err
			}
			pls = append(pls, pl)
		}
		if len(pls) > 0 {
			p.plans[h] = pls
		}
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *UploadFiles) ShouldRun() bool { return len(p.plans) > 0 }

// Plan implements Planner.
func (p *UploadFiles) Plan(ctx context.Context) ([]node.Change, error) {
	return p.state.PlanHosts(ctx, p.plans)
}

// Run implements Phase.
func (p *UploadFiles) Run(ctx context.Context) error {
	s := p.state
	ctx = s.WithFanout(ctx)
	return s.Hosts.Filter(func(h *node.Host) bool { return len(p.plans[h]) > 0 }).Parallel(ctx, s.Options.UploadConcurrency, func(ctx context.Context, h *node.Host) error {
		return s.PlaceAll(ctx, h, p.Title(), p.plans[h])
	})
}

// CommonEntries are the package entries Upload files to hosts sends h:
// spec.config.files selected for it and the image archive of its
// architecture. The e2e suite reads it to know what to look for on a host
// of a package it did not build.
func CommonEntries(entries []pkgfile.Entry, h *node.Host) []pkgfile.Entry {
	return commonEntries(entries, h)
}
