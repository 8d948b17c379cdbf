package phase

import (
	"context"
	"fmt"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Connect opens the SSH session to each host and does nothing else. A dry
// run needs it: a preflight that never reached a host would report on a
// cluster it never looked at.
type Connect struct {
	readOnly
	base
	mu    sync.Mutex
	conns []*host.Conn
}

// Title implements Phase.
func (p *Connect) Title() string { return "Connect to hosts" }

// Run implements Phase.
func (p *Connect) Run(ctx context.Context) error {
	s := p.state
	return s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		c, err := host.Connect(ctx, h.Spec, host.ConnectOptions{
			KnownHostsPath: s.Options.KnownHostsPath,
			Timeout:        s.Options.ConnectTimeout,
			Log:            s.Logger(),
			LookupEnv:      s.Options.LookupEnv,
		})
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		// counted per phase: the manager logs the counts and the report
		// keeps them (node.Report.RoundTrips)
		h.Conn = s.Report.CountRoundTrips(h.String(), c)
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		s.Logger().Info("connected", "host", h.String())
		return nil
	})
}

// Close closes every connection this phase opened; Disconnect and CleanUp
// both end here, so it is safe to call twice.
func (p *Connect) Close() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		if err := c.Close(); err != nil {
			p.state.Logger().Debug("closing connection", "host", c.String(), "error", err)
		}
	}
}

// CleanUp implements CleanUpper: a failed run still closes its sessions.
func (p *Connect) CleanUp(context.Context) { p.Close() }
