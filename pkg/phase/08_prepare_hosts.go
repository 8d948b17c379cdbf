package phase

import (
	"context"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// PrepareHosts sets the package's sysctls (persisted in /etc/sysctl.d and
// applied key by key), the host's environment, swap off, the kernel
// modules the engine and those sysctls need, and the etcd user rke2's CIS
// profile wants on controllers.
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
		if needsEtcdUser(s, h) {
			steps = append(steps, hostos.SystemUser{Name: "etcd", Comment: "etcd user"})
		}
		p.steps[h] = steps
	}
	return nil
}

// needsEtcdUser: rke2 with profile cis (or a versioned cis-1.x) refuses to
// start a server without an etcd user and group; agents do not run etcd
// (docs/reference/engines.md 11). The profile may come from the distro or
// from the inventory profile the host names.
func needsEtcdUser(s *node.Fleet, h *node.Host) bool {
	if s.Distro.Spec.Type != v1alpha1.EngineRKE2 || !h.IsController() {
		return false
	}
	cfg := s.Distro.Spec.Config.Engine.Config
	if s.Cluster != nil {
		cfg = engine.HostConfig(s.Cluster, s.Distro, h.Spec)
	}
	profile, _ := cfg["profile"].(string)
	return profile == "cis" || strings.HasPrefix(profile, "cis-")
}
