package phase

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// DistroFacts reads the engine version installed on each host and whether
// its service runs. That tells an upgrade from an install, and catches a
// downgrade before a real run starts one. A run with no package and no
// engine named (a reset) first finds the one engine the hosts run.
type DistroFacts struct {
	readOnly
	base
	// AnyVersion accepts a host newer than the package: a reset installs
	// nothing, so there is no downgrade to refuse.
	AnyVersion bool
}

// Title implements Phase.
func (p *DistroFacts) Title() string { return "Gathering facts about the distro installed" }

// Run implements Phase.
func (p *DistroFacts) Run(ctx context.Context) error {
	s := p.state
	if s.Engine == nil {
		e, err := s.DetectEngine(ctx)
		if err != nil {
			return err
		}
		s.Engine = e
		s.Logger().Info("engine found on the hosts", "engine", e.Name())
	}
	var want *engine.Version
	if !p.AnyVersion && s.Distro != nil && s.Distro.Spec.Version != "" {
		v, err := engine.ParseVersion(s.Distro.Spec.Version)
		if err != nil {
			return fmt.Errorf("the package's spec.version: %w", err)
		}
		want = &v
	}
	err := s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		out, err := h.Conn.Sudo(ctx, s.Engine.VersionCommand())
		if err != nil {
			return fmt.Errorf("reading the %s version: %w", s.Engine.Name(), err)
		}
		h.EngineVersion, h.EngineRunning, h.JoinsThrough = "", false, ""
		if strings.TrimSpace(out) == "" {
			s.Logger().Info("no engine installed", "host", h.String(), "engine", s.Engine.Name())
			return nil
		}
		have, err := engine.ParseVersion(out)
		if err != nil {
			return fmt.Errorf("reading the %s version: %w", s.Engine.Name(), err)
		}
		h.EngineVersion = have.String()
		state, _ := h.Conn.Sudo(ctx, shell.Join("systemctl", "is-active", s.Engine.Service(h.IsController())))
		h.EngineRunning = strings.TrimSpace(state) == "active"
		h.JoinsThrough = s.JoinedThrough(ctx, h)
		if want != nil && engine.Compare(have, *want) > 0 {
			return fmt.Errorf("runs %s %s, newer than the package's %s: cargoship will not downgrade a cluster", s.Engine.Name(), have, *want)
		}
		if want != nil {
			if err := engine.CheckUpgradeStep(have, *want); err != nil {
				return fmt.Errorf("%s %w; nothing was changed", s.Engine.Name(), err)
			}
		}
		s.Logger().Info("engine installed", "host", h.String(), "version", have.String(), "running", h.EngineRunning)
		return nil
	})
	if err == nil && len(s.Hosts.Filter(func(h *node.Host) bool { return h.EngineVersion != "" })) == 0 {
		s.Report.Note("no host runs %s yet: this is an install", s.Engine.Name())
	}
	return err
}
