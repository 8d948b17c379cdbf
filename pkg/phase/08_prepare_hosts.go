package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// PrepareHosts sets the package's sysctls (persisted in /etc/sysctl.d and
// applied key by key), the host's environment, swap off, and the kernel
// modules the engine and those sysctls need.
type PrepareHosts struct{ stepPhase }

// NewPrepareHosts is phase 8.
func NewPrepareHosts() *PrepareHosts {
	return &PrepareHosts{stepPhase{title: "Prepare hosts"}}
}

// Prepare implements Preparer.
func (p *PrepareHosts) Prepare(_ context.Context) error {
	s := p.state
	p.steps = map[*node.Host][]hostos.Step{}
	sysctl := s.Distro.Spec.Config.OS.Sysctl
	for _, h := range s.Hosts {
		steps := []hostos.Step{hostos.Modules{Names: hostos.ModulesFor(sysctl)}, hostos.SwapOff{}}
		if len(sysctl) > 0 {
			steps = append(steps, hostos.Sysctl{Values: sysctl})
		}
		if len(h.Spec.Environment) > 0 {
			steps = append(steps, hostos.Environment{Values: h.Spec.Environment})
		}
		p.steps[h] = steps
	}
	return nil
}
