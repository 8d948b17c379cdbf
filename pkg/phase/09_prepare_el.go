package phase

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// selinuxEnabled selects the hosts whose SELinux is enabled, enforcing or
// permissive, whatever their family: SLE Micro, SLES 16 and Tumbleweed
// enforce it too (docs/reference/hosts.md §6.4).
func selinuxEnabled(h *node.Host) bool {
	return hostos.IsSELinuxEnabled(h.Facts.SELinux)
}

// PrepareEL installs container-selinux (and the engine's own policy
// package) on hosts with SELinux enabled, from rpm files
// the package carries: an air-gapped host has no repository to fetch them
// from.
type PrepareEL struct{ uploadStepPhase }

// NewPrepareEL is phase 9.
func NewPrepareEL() *PrepareEL {
	return &PrepareEL{uploadStepPhase{stepPhase: stepPhase{title: "Prepare hosts - Enterprise Linux support"}}}
}

// isPolicyRPM says an rpm is SELinux policy: container-selinux, or the
// k3s-selinux / rke2-selinux packages that build on it.
func isPolicyRPM(name string) bool {
	b := path.Base(name)
	return strings.HasSuffix(b, ".rpm") && (strings.HasPrefix(b, "container-selinux") || strings.Contains(b, "-selinux-"))
}

// Prepare implements Preparer.
func (p *PrepareEL) Prepare(_ context.Context) error {
	s := p.state
	p.steps, p.uploads = map[*node.Host][]hostos.Step{}, map[*node.Host][]node.Placement{}
	entries := s.Package.Entries()
	for _, h := range s.Hosts {
		if !selinuxEnabled(h) {
			continue
		}
		step := requireContainerSELinux{cfg: hostos.For(h.OS)}
		p.uploads[h], step.files, step.keys, step.with = p.policyFiles(entries, h)
		p.steps[h] = []hostos.Step{hostos.SELinuxEnabled{Configurer: step.cfg, Step: step}}
	}
	if len(p.steps) == 0 {
		s.Report.Note("%s: no host with SELinux enabled; no host claimed", p.title)
	}
	return nil
}

// policyFiles are what phase 9 uploads to h: the policy rpms it installs,
// the signing keys, and, on a host of the rpm route, that route's other
// rpms. Those are installed later (phases 15 to 25) but resolved with the
// policy now, so a missing dependency is named before anything is
// installed (docs/reference/hosts.md §2.9). With no policy rpm, nothing.
func (p *PrepareEL) policyFiles(entries []pkgfile.Entry, h *node.Host) (uploads []node.Placement, files, keys, with []string) {
	s := p.state
	var route []pkgfile.Entry
	if h.OS.Route() == v1alpha1.RouteRPM {
		route = routeEntries(entries, v1alpha1.RouteRPM, h)
	}
	for _, e := range entries {
		policy, key := isPolicyRPM(e.Target), hostos.IsRPMKey(e.Target)
		later := !policy && !key && strings.HasSuffix(e.Target, ".rpm") && slices.ContainsFunc(route, func(r pkgfile.Entry) bool { return r.Name == e.Name })
		if e.Kind != pkgfile.KindOS || !policy && !key && !later || !selects(e.Selector, e.Architecture, h) {
			continue
		}
		pl := s.EntryPlacement(e, e.Target)
		pl.Staged = false
		uploads = append(uploads, pl)
		switch {
		case key:
			keys = append(keys, pl.Target)
		case policy:
			files = append(files, pl.Target)
		default:
			with = append(with, pl.Target)
		}
	}
	if len(files) == 0 {
		return nil, nil, nil, nil
	}
	return uploads, files, keys, with
}

// hostRunner keeps step adapters short.
type hostRunner = host.Runner

// requireContainerSELinux installs the policy rpms and fails when
// container-selinux is still missing: an SELinux host without it cannot
// run containers (a permissive one as soon as it enforces), and there is no repository to fetch it from.
type requireContainerSELinux struct {
	cfg   hostos.Configurer
	files []string
	// keys are the signing keys the package carries for the host
	// (under /etc/pki/rpm-gpg), uploaded with the policy rpms and
	// imported before them: a STIG host checks local packages' signatures.
	keys []string
	// with are the host's other rpms, resolved with the policy and not
	// installed here.
	with []string
}

func (r requireContainerSELinux) Plan(ctx context.Context, run hostRunner) (hostos.Change, error) {
	return hostos.Packages{Configurer: r.cfg, Files: r.files, Keys: r.keys, ResolveWith: r.with}.Plan(ctx, run)
}

func (r requireContainerSELinux) Apply(ctx context.Context, run hostRunner) (hostos.Change, error) {
	c, err := hostos.Packages{Configurer: r.cfg, Files: r.files, Keys: r.keys, ResolveWith: r.with}.Apply(ctx, run)
	if err != nil {
		return c, err
	}
	have, err := r.cfg.Installed(ctx, run, "container-selinux")
	if err != nil {
		return c, err
	}
	if len(have) == 0 {
		if rpm, err := hostos.HasRPM(ctx, run); err != nil || !rpm {
			// No rpm database (Flatcar): the OS's policy carries the
			// container rules itself; there is no package to ask about.
			return c, err
		}
		return c, fmt.Errorf("SELinux is enabled and container-selinux is not installed; the package carries no container-selinux rpm for this host (add one with selector.package: rpm)")
	}
	return c, nil
}
