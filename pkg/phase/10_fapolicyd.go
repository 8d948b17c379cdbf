package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Fapolicyd writes the distro's fapolicyd rules to 31-cargoship.rules and
// its executable rules to 32-cargoship-executable.rules on hosts where
// fapolicyd runs, and reloads the rules when they changed.
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
	if osc.Fapolicyd == "" && osc.FapolicydExecutable == "" {
		s.Report.Note("%s: the package carries no fapolicyd rules; no host claimed", p.title)
		return nil
	}
	for _, h := range s.Hosts {
		if h.Facts.Fapolicyd {
			p.steps[h] = []hostos.Step{hostos.Fapolicyd{Configurer: hostos.For(h.OS), Rules: osc.Fapolicyd, ExecutableRules: osc.FapolicydExecutable}}
		}
	}
	if len(p.steps) == 0 {
		s.Report.Note("%s: fapolicyd runs on no host; no host claimed", p.title)
	}
	return nil
}
