package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Disconnect deletes lingering temp files and closes every connection. Its
// dry-run path only closes connections: a dry run wrote no temp files.
type Disconnect struct {
	ownDryRun
	Connect *Connect
	base
}

// Title implements Phase.
func (p *Disconnect) Title() string { return "Disconnect from hosts" }

// Run implements Phase.
func (p *Disconnect) Run(ctx context.Context) error {
	s := p.state
	err := s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		if h.Conn == nil {
			return nil
		}
		_, err := h.Conn.Sudo(ctx, shell.Join("rm", "-rf", TempDir))
		return err
	})
	p.Connect.Close()
	return err
}

// DryRun implements DryRunner.
func (p *Disconnect) DryRun(context.Context) error {
	p.Connect.Close()
	return nil
}

// TempDir is where a run stages files on a host; Disconnect removes it.
const TempDir = "/var/tmp/cargoship"
