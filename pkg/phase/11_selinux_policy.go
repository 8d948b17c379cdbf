package phase

import (
	"context"
	"path"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// selinuxModulesDir is where policy modules are uploaded before semodule
// installs them: under /usr/share/selinux/packages, where policy packages
// keep their modules, so the file is usr_t, which semodule's domain may
// read under enforcing; it may not read var_lib_t (docs/reference/hosts.md
// §6.2).
const selinuxModulesDir = "/usr/share/selinux/packages/cargoship"

// SELinuxPolicy installs the definition's policy modules, booleans and file
// contexts on every host with SELinux enabled (enforcing or permissive),
// whatever its family.
type SELinuxPolicy struct{ uploadStepPhase }

// NewSELinuxPolicy is phase 11.
func NewSELinuxPolicy() *SELinuxPolicy {
	return &SELinuxPolicy{uploadStepPhase{stepPhase: stepPhase{title: "Prepare hosts - Enterprise Linux support - SELinux policy"}}}
}

// Prepare implements Preparer.
func (p *SELinuxPolicy) Prepare(_ context.Context) error {
	s := p.state
	p.steps, p.uploads = map[*node.Host][]hostos.Step{}, map[*node.Host][]node.Placement{}
	se := s.Distro.Spec.Config.OS.SELinux
	if se == nil {
		s.Report.Note("%s: the package carries no SELinux policy; no host claimed", p.title)
		return nil
	}
	mods := s.Package.EntriesOf(pkgfile.KindSELinux)
	for _, h := range s.Hosts {
		if !selinuxEnabled(h) {
			continue
		}
		pol := hostos.SELinuxPolicy{Booleans: se.Booleans}
		for _, fc := range se.FileContexts {
			pol.FileContexts = append(pol.FileContexts, hostos.SELinuxFileContext{Path: fc.Path, Type: fc.Type})
		}
		for _, e := range mods {
			pl := s.EntryPlacement(e, path.Join(selinuxModulesDir, path.Base(e.Name)))
			pl.Staged = false
			p.uploads[h] = append(p.uploads[h], pl)
			pol.Modules = append(pol.Modules, hostos.SELinuxModule{Name: e.Module, Path: pl.Target, SHA256: pl.SHA256})
		}
		p.steps[h] = []hostos.Step{hostos.SELinuxEnabled{Configurer: hostos.For(h.OS), Step: pol}}
	}
	if len(p.steps) == 0 {
		s.Report.Note("%s: no host with SELinux enabled; no host claimed", p.title)
	}
	return nil
}
