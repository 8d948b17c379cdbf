package phase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// lockHold is this run's lock on one host while the run holds it.
type lockHold struct {
	h *node.Host
	// conn is the host's connection as it was before the guard went over
	// it: the lock's own steps go straight to it.
	conn host.Runner
	// confirmed is when the last touch that found the lock ours was sent
	// (UnixNano): the host cannot have judged it stale before then.
	confirmed atomic.Int64
	released  atomic.Bool
	verify    sync.Mutex // one check at a time when the refresh is late
}

func (k *lockHold) confirm(sent time.Time) { k.confirmed.Store(sent.UnixNano()) }

// since is how long ago the lock was last found ours.
func (k *lockHold) since() time.Duration {
	return time.Since(time.Unix(0, k.confirmed.Load()))
}

// LockLostError says this run's lock on a host is no longer its own: it
// went stale while the run could not touch it (cut off, stopped) and
// another cargoship took it over, or it was removed. The run stops on it
// before its next change.
type LockLostError struct {
	Host string
	// Holder is the lock's holder now, shown only through holderName; ""
	// when the lock is gone.
	Holder string
	// Refused says the lock path is no longer a regular file.
	Refused bool
}

func (e *LockLostError) Error() string {
	var now string
	switch {
	case e.Refused:
		now = LockPath + " is no longer a regular file"
	case e.Holder == "":
		now = LockPath + " is gone"
	default:
		now = fmt.Sprintf("another cargoship (%s) holds %s now", holderName(e.Holder), LockPath)
	}
	return fmt.Sprintf("this run's lock on %s was lost: %s (a lock its holder cannot touch goes stale, and may be taken over); the run stopped before its next change", e.Host, now)
}

// lostErr is the first lock this run lost, nil while it holds them all.
func (p *AcquireLock) lostErr() error {
	if e := p.lost.Load(); e != nil {
		return e
	}
	return nil
}

// touch refreshes this run's lock on a host if the lock still holds this
// run's id, in one step, and records the lock as lost otherwise.
func (p *AcquireLock) touch(ctx context.Context, k *lockHold) error {
	sent := time.Now()
	out, err := k.conn.Sudo(ctx, host.Script(lockTouchScript, LockPath, p.state.Options.InstanceID))
	if err != nil {
		return err
	}
	first, rest, _ := strings.Cut(out, "\n")
	lost := &LockLostError{Host: k.h.String()}
	switch first {
	case "ours":
		k.confirm(sent)
		return nil
	case "refused":
		lost.Refused = true
	case "held":
		lost.Holder = rest
	case "absent":
	default:
		return fmt.Errorf("lock %s: the refresh answered %q", LockPath, first)
	}
	if p.lost.CompareAndSwap(nil, lost) {
		p.state.Logger().Error("lock lost", "host", lost.Host, "holder", holderName(lost.Holder), "error", lost)
	}
	return lost
}

// refresh touches the lock on one host every half stale age until the run
// releases it or loses it there. Each host has its own loop, so a host
// that does not answer delays no other host's touch.
func (p *AcquireLock) refresh(ctx context.Context, k *lockHold) {
	every := p.staleAfter() / 2
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tctx, cancel := context.WithTimeout(ctx, every)
		err := p.touch(tctx, k)
		cancel()
		if lost := (*LockLostError)(nil); errors.As(err, &lost) {
			return
		}
		if err != nil && ctx.Err() == nil {
			p.state.Logger().Warn("refreshing lock failed", "host", k.h.String(), "error", err)
		}
	}
}

// overdue is how long after the last touch that found the lock ours a
// command first checks it again: past the refresh's half stale age with
// room for a late tick, and short of the stale age by more than the
// second the host's whole-second age can add.
func (p *AcquireLock) overdue() time.Duration {
	return p.staleAfter()/2 + p.staleAfter()/8
}

// guard is what every command of the run on a held host goes through
// before it is sent: it fails once any lock is lost, and checks the lock
// on the host itself first when the refresh is late (the run was cut off
// or stopped, so the lock may have gone stale and been taken). A lost
// lock is a permanent error, so a phase polling a host (a node's
// readiness) stops at once instead of retrying until its own timeout.
func (p *AcquireLock) guard(ctx context.Context, k *lockHold) error {
	if k.released.Load() {
		return nil
	}
	if err := p.lostErr(); err != nil {
		return retry.Permanent(err)
	}
	if k.since() < p.overdue() {
		return nil
	}
	k.verify.Lock()
	defer k.verify.Unlock()
	if k.since() < p.overdue() {
		return nil // checked while this one waited
	}
	late := k.since()
	if err := p.touch(ctx, k); err != nil {
		if lost := p.lostErr(); lost != nil {
			return retry.Permanent(lost)
		}
		// the host is named by whoever sent the command, as for any error of it
		return fmt.Errorf("lock %s was last found this run's %s ago and cannot be confirmed now, so nothing more is changed on this host: %w", LockPath, late.Round(time.Second), err)
	}
	return nil
}
