package phase

import (
	"context"
	"slices"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Fapolicyd writes the distro's fapolicyd rules to 80-cargoship.rules and
// its executable rules, with an execute allow for every executable the
// package installs on the host, to 81-cargoship-executable.rules on hosts
// where fapolicyd runs, and reloads the rules when they changed.
type Fapolicyd struct{ stepPhase }

// NewFapolicyd is phase 10.
func NewFapolicyd() *Fapolicyd {
	return &Fapolicyd{stepPhase{title: "Prepare hosts - Enterprise Linux support - Fapolicyd"}}
}

// Prepare implements Preparer.
func (p *Fapolicyd) Prepare(_ context.Context) error {
	s := p.state
	p.steps = map[*node.Host][]hostos.Step{}
	osc := s.Distro.Spec.Config.OS
	entries := s.Package.Entries()
	for _, h := range s.Hosts {
		if !h.Facts.Fapolicyd {
			continue
		}
		trusted := installedExecutables(entries, h)
		if osc.Fapolicyd == "" && osc.FapolicydExecutable == "" && len(trusted) == 0 {
			continue
		}
		p.steps[h] = []hostos.Step{hostos.Fapolicyd{Configurer: hostos.For(h.OS), Rules: osc.Fapolicyd, ExecutableRules: osc.FapolicydExecutable, Trusted: trusted}}
	}
	if len(p.steps) == 0 {
		s.Report.Note("%s: fapolicyd runs on no host that the package gives rules or executables; no host claimed", p.title)
	}
	return nil
}

// installedExecutables are the targets of the os.files marked executable
// that h could get, sorted: fapolicyd trusts what the rpm database lists,
// and these are copied in, not installed by rpm (docs/reference/hosts.md
// §7.3). Links need no rule: fapolicyd decides on the file executed. A
// path of another route is harmless: a rule naming a file that is not
// there matches nothing.
func installedExecutables(entries []pkgfile.Entry, h *node.Host) []string {
	var out []string
	for _, e := range entries {
		if e.Kind == pkgfile.KindOS && e.Executable && e.Target != "" && !e.IsDirectory && selects(e.Selector, e.Architecture, h) {
			out = append(out, e.Target)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
