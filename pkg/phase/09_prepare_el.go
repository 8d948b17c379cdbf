package phase

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

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
		var files, keys []string
		for _, e := range entries {
			key := hostos.IsRPMKey(e.Target)
			if e.Kind != pkgfile.KindOS || !key && !isPolicyRPM(e.Target) || !selects(e.Selector, e.Architecture, h) {
				continue
			}
			pl := s.EntryPlacement(e, e.Target)
			pl.Staged = false
			p.uploads[h] = append(p.uploads[h], pl)
			if key {
				keys = append(keys, pl.Target)
			} else {
				files = append(files, pl.Target)
			}
		}
		if len(files) == 0 {
			keys, p.uploads[h] = nil, slices.DeleteFunc(p.uploads[h], func(pl node.Placement) bool { return hostos.IsRPMKey(pl.Target) })
		}
		cfg := hostos.For(h.OS)
		p.steps[h] = []hostos.Step{hostos.SELinuxEnabled{Configurer: cfg, Step: requireContainerSELinux{cfg: cfg, files: files, keys: keys}}}
	}
	if len(p.steps) == 0 {
		s.Report.Note("%s: no host with SELinux enabled; no host claimed", p.title)
	}
	return nil
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
}

func (r requireContainerSELinux) Plan(ctx context.Context, run hostRunner) (hostos.Change, error) {
	return hostos.Packages{Configurer: r.cfg, Files: r.files, Keys: r.keys}.Plan(ctx, run)
}

func (r requireContainerSELinux) Apply(ctx context.Context, run hostRunner) (hostos.Change, error) {
	c, err := hostos.Packages{Configurer: r.cfg, Files: r.files, Keys: r.keys}.Apply(ctx, run)
	if err != nil {
		return c, err
	}
	have, err := r.cfg.Installed(ctx, run, "container-selinux")
	if err != nil {
		return c, err
	}
	if len(have) == 0 {
		return c, fmt.Errorf("SELinux is enabled and container-selinux is not installed; the package carries no container-selinux rpm for this host (add one with selector.package: rpm)")
	}
	return c, nil
}
