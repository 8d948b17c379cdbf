package node

import (
	"context"
	"strconv"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// RemoveRelayKeys is reset's step that drops the peer relay keys a killed
// apply left in the login user's authorized_keys: a relay removes its own
// key whatever happens, but not when the process is killed outright
// (docs/reference/hosts.md §11.2). Address is the host's private address,
// the one relays reach it at. A host whose sshd cannot be read (no sshd,
// a localhost connection) was never relayed to: that is a warning.
type RemoveRelayKeys struct {
	Address string
}

var _ hostos.Step = RemoveRelayKeys{}

// Plan implements hostos.Step.
func (s RemoveRelayKeys) Plan(ctx context.Context, r host.Runner) (hostos.Change, error) {
	return s.run(ctx, r, false)
}

// Apply implements hostos.Step.
func (s RemoveRelayKeys) Apply(ctx context.Context, r host.Runner) (hostos.Change, error) {
	return s.run(ctx, r, true)
}

func (s RemoveRelayKeys) run(ctx context.Context, r host.Runner, remove bool) (hostos.Change, error) {
	var c hostos.Change
	if s.Address == "" {
		return c, nil // relays go only to hosts with a private address
	}
	p, err := readPeer(ctx, r, s.Address)
	if err != nil {
		if ctx.Err() != nil {
			return c, err
		}
		c.Warnings = append(c.Warnings, "peer relay keys not checked: "+err.Error())
		return c, nil
	}
	n, err := host.RelayLines(ctx, r, p, remove)
	if err != nil || n == 0 {
		return c, err
	}
	what := "relay keys"
	if n == 1 {
		what = "relay key"
	}
	c.Actions = append(c.Actions, "remove "+strconv.Itoa(n)+" peer "+what+" left by a killed run from "+p.AuthorizedKeys)
	return c, nil
}
