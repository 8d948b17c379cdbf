package hostos

import (
	"slices"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Prober is a Step that can say which commands its Apply sends a host
// that needs nothing, in order: the reads its plan makes. A caller
// prefetches them (host.Prefetch) so a converged host is asked once for
// all of a phase's steps. A list that is wrong costs round trips, never
// correctness: a command not foreseen goes to the host.
type Prober interface {
	Probes() []string
}

// Probes implements Prober.
func (m Modules) Probes() []string {
	names, err := m.names()
	if err != nil {
		return nil // the step fails before asking anything
	}
	return []string{host.ReadFileCommand(m.path()), host.Script(moduleState, names...)}
}

// Probes implements Prober.
func (s SwapOff) Probes() []string {
	return []string{host.ReadFileCommand(s.swaps()), host.ReadFileCommand(s.fstab())}
}

// Probes implements Prober: Apply reads the legacy files twice, in its
// plan and again before removing them.
func (s Sysctl) Probes() []string {
	keys, err := s.keys()
	if err != nil {
		return nil
	}
	legacy := s.legacy().probes()
	out := append(slices.Clone(legacy), host.ReadFileCommand(s.path()))
	if len(keys) > 0 {
		sources := s.Sources
		if sources == nil {
			sources = SysctlSources
		}
		out = append(out, host.Script(sysctlScan, sources...), host.Script(sysctlRead, keys...))
	}
	return append(out, legacy...)
}

// probes are the reads of a plan finding none of the files: a Stat each.
func (s removeStep) probes() []string {
	var out []string
	for _, p := range s.paths {
		out = append(out, host.StatCommand(p))
	}
	return out
}

// Probes implements Prober.
func (e Environment) Probes() []string {
	if len(e.Values) == 0 {
		return nil
	}
	return []string{host.ReadFileCommand(e.path())}
}

// Probes implements Prober.
func (u SystemUser) Probes() []string {
	return []string{host.Script(sysUserProbe, u.Name)}
}
