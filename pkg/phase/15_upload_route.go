package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// UploadRoute is one install route's upload phase (RPM, APT, Binaries). A
// host is claimed by the route whose files it actually gets: a package with
// no debs leaves Debian hosts to the binary route (docs/apply.md, Install
// routes).
type UploadRoute struct {
	Route string
	base
	plans map[*node.Host][]node.Placement
}

// NewUploadRPM is phase 15.
func NewUploadRPM() *UploadRoute { return &UploadRoute{Route: v1alpha1.RouteRPM} }

// NewUploadAPT is phase 16.
func NewUploadAPT() *UploadRoute { return &UploadRoute{Route: v1alpha1.RouteAPT} }

// NewUploadBinary is phase 17, the catch-all.
func NewUploadBinary() *UploadRoute { return &UploadRoute{Route: v1alpha1.RouteBinary} }

// Title implements Phase.
func (p *UploadRoute) Title() string {
	switch p.Route {
	case v1alpha1.RouteRPM:
		return "Upload files to hosts – RPM"
	case v1alpha1.RouteAPT:
		return "Upload files to hosts – APT"
	}
	return "Upload files to hosts – Binaries"
}

// eligible says whether a host may take this route at all: RPM and APT by
// OS family, the binary route for any host no earlier route claimed.
func (p *UploadRoute) eligible(h *node.Host) bool {
	if h.Route != "" {
		return false
	}
	switch p.Route {
	case v1alpha1.RouteRPM, v1alpha1.RouteAPT:
		return h.OS.Route() == p.Route
	}
	return true
}

// Prepare implements Preparer: it selects each eligible host's files and
// claims the host for this route only when there are some.
func (p *UploadRoute) Prepare(_ context.Context) error {
	s := p.state
	p.plans = map[*node.Host][]node.Placement{}
	entries := s.Package.Entries()
	for _, h := range s.Hosts {
		if !p.eligible(h) {
			continue
		}
		es := routeEntries(entries, p.Route, h)
		if len(es) == 0 {
			continue
		}
		var pls []node.Placement
		for _, e := range es {
			pl := s.EntryPlacement(e, e.Target)
			if p.Route != v1alpha1.RouteBinary {
				pl.Staged = false // package files are installed by the package manager, not moved
			}
			pls = append(pls, pl)
		}
		p.plans[h] = pls
		h.Route = p.Route
	}
	if len(p.plans) == 0 {
		s.Report.Note("%s: the package has no %s files for any host here; no host claimed", p.Title(), p.Route)
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *UploadRoute) ShouldRun() bool { return len(p.plans) > 0 }

// Plan implements Planner. It lists the uploads only: installing the
// package files is the work of the phase that installs them (Initialize,
// Upgrade or Install staged files), after the staging half, so a dry run
// of the staging half alone lists only what that half does. Like Run, it
// hands those phases the package files that would wait, so their plans see
// them (docs/apply.md, "Where the staging half ends").
func (p *UploadRoute) Plan(ctx context.Context) ([]node.Change, error) {
	changes, err := p.state.PlanHosts(ctx, p.plans)
	if err != nil {
		return nil, err
	}
	if p.Route != v1alpha1.RouteBinary {
		p.queuePackages()
	}
	return changes, nil
}

// queuePackages queues every planned package file for the install phases.
func (p *UploadRoute) queuePackages() {
	for _, h := range p.state.Hosts {
		for _, pl := range p.plans[h] {
			p.state.QueuePackage(h, pl.Target)
		}
	}
}

// Run implements Phase.
func (p *UploadRoute) Run(ctx context.Context) error {
	s := p.state
	ctx = s.WithFanout(ctx)
	claimed := s.Hosts.Filter(func(h *node.Host) bool { return len(p.plans[h]) > 0 })
	s.Logger().Info("route", "route", p.Route, "hosts", claimed.Names())
	return claimed.Parallel(ctx, s.Options.UploadConcurrency, func(ctx context.Context, h *node.Host) error {
		if err := s.PlaceAll(ctx, h, p.Title(), p.plans[h]); err != nil {
			return err
		}
		if p.Route != v1alpha1.RouteBinary {
			for _, pl := range p.plans[h] {
				s.QueuePackage(h, pl.Target)
			}
		}
		return nil
	})
}

// RouteEntries are the package entries the route's upload phase sends h
// when it claims it (see UploadRoute.eligible for which host it may claim).
// The e2e suite reads it to know what to look for on a host of a package
// it did not build.
func RouteEntries(entries []pkgfile.Entry, route string, h *node.Host) []pkgfile.Entry {
	return routeEntries(entries, route, h)
}
