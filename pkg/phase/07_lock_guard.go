package phase

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// lockGuarded is a held host's connection while the run holds its lock:
// every command and SFTP session the later phases send goes through
// AcquireLock.guard first, so a run whose lock is lost on any host stops
// before its next change, in whatever phase it is. Phases need no check
// of their own, and a phase half-way through stops as well.
type lockGuarded struct {
	p *AcquireLock
	k *lockHold
}

var _ host.Runner = (*lockGuarded)(nil)

// guardConn wraps a held host's connection, offering host.SFTPOpener
// exactly when it does (host.Upload asserts it).
func guardConn(p *AcquireLock, k *lockHold) host.Runner {
	g := &lockGuarded{p: p, k: k}
	if o, ok := k.conn.(host.SFTPOpener); ok {
		return &lockGuardedSFTP{lockGuarded: g, opener: o}
	}
	return g
}

// guardOf is the hold whose guard r is, nil when r is no guard.
func guardOf(r host.Runner) *lockHold {
	switch g := r.(type) {
	case *lockGuarded:
		return g.k
	case *lockGuardedSFTP:
		return g.k
	}
	return nil
}

// String implements host.Runner: the host's own name.
func (g *lockGuarded) String() string { return g.k.conn.String() }

// Run implements host.Runner.
func (g *lockGuarded) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	if err := g.p.guard(ctx, g.k); err != nil {
		return "", err
	}
	return g.k.conn.Run(ctx, cmd, opts...)
}

// Sudo implements host.Runner.
func (g *lockGuarded) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	if err := g.p.guard(ctx, g.k); err != nil {
		return "", err
	}
	return g.k.conn.Sudo(ctx, cmd, opts...)
}

// Unwrap returns the connection under the guard.
func (g *lockGuarded) Unwrap() host.Runner { return g.k.conn }

// lockGuardedSFTP is a lockGuarded over a connection that opens SFTP
// sessions.
type lockGuardedSFTP struct {
	*lockGuarded
	opener host.SFTPOpener
}

var _ host.SFTPOpener = (*lockGuardedSFTP)(nil)

// OpenSFTP implements host.SFTPOpener.
func (g *lockGuardedSFTP) OpenSFTP(ctx context.Context) (*host.SFTP, error) {
	if err := g.p.guard(ctx, g.k); err != nil {
		return nil, err
	}
	return g.opener.OpenSFTP(ctx)
}
