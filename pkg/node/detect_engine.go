package node

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
)

// DetectEngine finds which engine the hosts run when no package or
// --distro names it: each engine's version command on every host. Exactly
// one engine must be installed somewhere; none, or two, is an error that
// says how to name it.
func (s *Fleet) DetectEngine(ctx context.Context) (engine.Engine, error) {
	found, err := Map(ctx, s.Hosts, s.Options.Concurrency, func(ctx context.Context, h *Host) ([]string, bool, error) {
		var names []string
		for _, name := range v1alpha1.Engines {
			e, err := engine.For(name)
			if err != nil {
				return nil, false, err
			}
			out, err := h.Conn.Sudo(ctx, e.VersionCommand())
			if err != nil {
				return nil, false, fmt.Errorf("reading the %s version: %w", name, err)
			}
			if strings.TrimSpace(out) != "" {
				names = append(names, name)
			}
		}
		return names, len(names) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	byEngine := map[string][]string{}
	for h, names := range found {
		for _, n := range names {
			byEngine[n] = append(byEngine[n], h.String())
		}
	}
	switch len(byEngine) {
	case 0:
		return nil, fmt.Errorf("no host has %s installed; name the engine with --distro", strings.Join(v1alpha1.Engines, ", "))
	case 1:
		for name := range byEngine {
			return engine.For(name)
		}
	}
	var parts []string
	for name, hosts := range byEngine {
		sort.Strings(hosts)
		parts = append(parts, fmt.Sprintf("%s on %s", name, strings.Join(hosts, ", ")))
	}
	sort.Strings(parts)
	return nil, fmt.Errorf("the hosts run more than one engine (%s); name the one to reset with --distro", strings.Join(parts, "; "))
}
