package phase

import (
	"context"
	"fmt"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// DetectOS reads /etc/os-release and picks each host's OS family, which
// decides its install route and its configurer.
type DetectOS struct {
	readOnly
	base
}

// Title implements Phase.
func (p *DetectOS) Title() string { return "Detect host operating systems" }

// Run implements Phase.
func (p *DetectOS) Run(ctx context.Context) error {
	s := p.state
	return s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		rel, err := hostos.ReadRelease(ctx, h.Conn)
		if err != nil {
			return fmt.Errorf("detecting the OS: %w", err)
		}
		o := hostos.Detect(rel)
		h.OS = o
		h.Facts.OSID, h.Facts.OSVersion, h.Facts.OSPretty, h.Facts.Family = rel.ID, rel.VersionID, rel.PrettyName, o.Family
		s.Logger().Info("detected", "host", h.String(), "os", o.String(), "route", o.Route())
		return nil
	})
}
