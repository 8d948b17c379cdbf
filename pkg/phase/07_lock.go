package phase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// Lock timings (docs/apply.md, The lock): a lock untouched for a minute
// (LockStaleEnv sets another age) is stale, and its holder touches it at
// half that, every 30 s. The lock lives in a directory of root's own:
// /run/lock is writable by every local user.
const (
	LockDir        = "/run/cargoship"
	LockPath       = LockDir + "/cargoship.lock"
	lockStaleAfter = 60 * time.Second
	lockRetryEvery = 5 * time.Second
)

// AcquireLock takes an exclusive lock on every host so two cargoships never
// change one fleet at once. It waits for a live holder up to the lock wait,
// takes over a stale lock, and then keeps its locks fresh until released.
// A run whose lock is lost on any host stops before its next change
// (lockGuarded).
type AcquireLock struct {
	base
	Wait       time.Duration // how long to wait for a live holder
	stale      time.Duration // the age from which a lock's holder is taken as dead
	mu         sync.Mutex
	held       []*lockHold
	lost       atomic.Pointer[LockLostError] // the first lock lost
	stop       context.CancelFunc            // ends the refresh loops
	refreshing sync.WaitGroup
}

// Title implements Phase.
func (p *AcquireLock) Title() string { return "Acquire exclusive host lock" }

// Prepare implements Preparer.
func (p *AcquireLock) Prepare(_ context.Context) error {
	s := p.state
	if !runID.MatchString(s.Options.InstanceID) {
		return fmt.Errorf("run id %q is not letters, digits, '.', '_' and '-': a lock holds nothing else", s.Options.InstanceID)
	}
	stale, err := lockStale(s.Options.LookupEnv)
	if err != nil {
		return err
	}
	if stale != lockStaleAfter {
		s.Logger().Info("the lock's stale age is set", "staleAfter", stale.String(), "by", LockStaleEnv)
	}
	p.stale = stale
	if p.Wait == 0 {
		p.Wait = s.Options.LockWait
	}
	if p.Wait == 0 {
		p.Wait = stale + stale/2
	}
	return nil
}

// staleAfter is the age from which a lock is stale: what Prepare set, or
// the default.
func (p *AcquireLock) staleAfter() time.Duration {
	if p.stale == 0 {
		return lockStaleAfter
	}
	return p.stale
}

// Plan implements Planner. A dry run takes no lock and a lock is not a
// change to the cluster, so it plans nothing; it only notes a live holder,
// whose run may be changing what the dry run reports.
func (p *AcquireLock) Plan(ctx context.Context) ([]node.Change, error) {
	err := p.state.Hosts.Parallel(ctx, p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		holder, age, err := readLock(ctx, h)
		if err == nil && age >= 0 && age < p.staleAfter() {
			p.state.Report.Note("%s: another cargoship (%s) holds the lock; what this dry run reports may be changing", h, holderName(holder))
		}
		return nil
	})
	return nil, err
}

// Run implements Phase. Once every lock is taken, each host's connection
// goes behind the guard and each lock gets its refresh loop.
func (p *AcquireLock) Run(ctx context.Context) error {
	s := p.state
	p.letGo() // a Run again without a release takes the locks afresh
	p.lost.Store(nil)
	err := s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		won, err := p.acquire(ctx, h)
		if err != nil {
			return err
		}
		k := &lockHold{h: h, conn: h.Conn}
		k.confirm(won)
		p.mu.Lock()
		p.held = append(p.held, k)
		p.mu.Unlock()
		return nil
	})
	if err != nil {
		// Give back the locks taken before the failure; CleanUp logs a
		// failed release, and the acquire error is the one to return.
		p.CleanUp(context.WithoutCancel(ctx))
		return err
	}
	refreshCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.stop = cancel
	for _, k := range p.held {
		k.h.Conn = guardConn(p, k)
		p.refreshing.Go(func() { p.refresh(refreshCtx, k) })
	}
	return nil
}

// acquire creates the lock file only if it is absent (noclobber opens with
// O_EXCL), waiting out a live holder and taking over a stale lock. It
// returns when the step that gave this run the lock was sent.
func (p *AcquireLock) acquire(ctx context.Context, h *node.Host) (time.Time, error) {
	id := p.state.Options.InstanceID
	create := host.Script(lockCreateScript, LockPath, id)
	start := time.Now()
	var won time.Time
	var held error // the last live holder seen
	take := func(ctx context.Context) error {
		// The lock can change under us (removed, or stale and taken
		// over): try again at once, a few times, before waiting.
		for range 3 {
			won = time.Now()
			_, err := h.Conn.Sudo(ctx, create)
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err() // the wait ran out mid-attempt: said below
			}
			var ee *host.ExitError
			if errors.As(err, &ee) && ee.Code == lockRefused {
				return retry.Permanent(fmt.Errorf("lock %s: %s", LockPath, ee.Stderr))
			}
			holder, age, err := readLock(ctx, h)
			switch {
			case err != nil && ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				return retry.Permanent(fmt.Errorf("lock %s: %w", LockPath, err))
			case holder == id:
				return nil
			case age < 0:
				continue // removed between our create and read
			case age >= p.staleAfter():
				won = time.Now()
				taken, err := p.takeOverLogged(ctx, h, holder, age)
				switch {
				case err != nil && ctx.Err() != nil:
					return ctx.Err()
				case err != nil:
					return retry.Permanent(fmt.Errorf("taking over the stale lock: %w", err))
				case taken:
					return nil
				}
				continue // another run took it first: its lock is live
			}
			held = fmt.Errorf("another cargoship (%s) holds %s, touched %s ago; waited %s of the %s allowed. If no run is active, the lock expires %s after its last touch",
				holderName(holder), LockPath, age.Round(time.Second), time.Since(start).Round(time.Second), p.Wait, p.staleAfter())
			return held
		}
		return fmt.Errorf("%s changed under every attempt to take it", LockPath)
	}
	err := retry.Do(ctx, retry.Policy{
		Wait: lockPollEvery(p.Wait, p.staleAfter()), Timeout: p.Wait,
		Log: p.state.Logger(), Level: slog.LevelInfo, Message: "waiting for lock", Attrs: []any{"host", h.String()},
	}, take)
	// The wait can run out in the middle of an attempt, whose error is
	// then only the deadline: the holder the last attempt found is what
	// the user needs to know.
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		if held != nil {
			return won, &retry.ExhaustedError{Err: held}
		}
		return won, fmt.Errorf("lock %s: the lock wait (%s) ran out before the host answered: %w", LockPath, p.Wait, err)
	}
	return won, err
}

// lockPollEvery is the pause between attempts: lockRetryEvery, or less
// for a short wait, so that a --lock-wait under it still tries again, or
// a short stale age, so that a stale lock is not waited on much past it.
func lockPollEvery(wait, stale time.Duration) time.Duration {
	return min(lockRetryEvery, max(min(wait, stale)/4, 250*time.Millisecond))
}

// readLock returns what the lock holds, as read (show it only through
// holderName), and its age; age < 0 when the lock is absent. A lock path
// that is a link or a special file is an error, and is never read.
func readLock(ctx context.Context, h *node.Host) (string, time.Duration, error) {
	out, err := h.Conn.Sudo(ctx, host.Script(lockReadScript, LockPath))
	if err != nil {
		return "", 0, err
	}
	first, rest, _ := strings.Cut(out, "\n")
	switch first {
	case "absent":
		return "", -1, nil
	case "refused":
		return "", 0, fmt.Errorf("%s or its directory is a symbolic link or not a regular file; cargoship never follows one: remove it", LockPath)
	}
	secs, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return "", 0, errors.New("unreadable lock age")
	}
	return rest, time.Duration(secs) * time.Second, nil
}

// letGo stops the refresh loops, hands every held host its own connection
// back and returns what was held.
func (p *AcquireLock) letGo() []*lockHold {
	if p.stop != nil {
		p.stop()
		p.refreshing.Wait()
		p.stop = nil
	}
	p.mu.Lock()
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, k := range held {
		k.released.Store(true)
		if guardOf(k.h.Conn) == k {
			k.h.Conn = k.conn
		}
	}
	return held
}

// Release stops refreshing and removes the locks this run holds (only if
// they still carry this run's id). A run that lost a lock fails here at
// the latest, whatever its phases made of the refused commands.
func (p *AcquireLock) Release(ctx context.Context) error {
	held := p.letGo()
	if len(held) == 0 {
		return nil
	}
	hosts := make(node.Hosts, 0, len(held))
	conns := make(map[*node.Host]host.Runner, len(held))
	for _, k := range held {
		hosts = append(hosts, k.h)
		conns[k.h] = k.conn
	}
	err := hosts.Parallel(ctx, p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		_, err := conns[h].Sudo(ctx, host.Script(lockReleaseScript, LockPath, p.state.Options.InstanceID))
		return err
	})
	return errors.Join(p.lostErr(), err)
}

// CleanUp releases the locks when a later phase fails or the run is
// interrupted.
func (p *AcquireLock) CleanUp(ctx context.Context) {
	if err := p.Release(ctx); err != nil {
		p.state.Logger().Warn("releasing locks", "error", err)
	}
}

// ReleaseLock is phase 30: it releases what AcquireLock took.
type ReleaseLock struct {
	Lock *AcquireLock
	base
}

// Title implements Phase.
func (p *ReleaseLock) Title() string { return "Release exclusive host lock" }

// Plan implements Planner: releasing a lock changes nothing.
func (p *ReleaseLock) Plan(context.Context) ([]node.Change, error) { return nil, nil }

// Run implements Phase.
func (p *ReleaseLock) Run(ctx context.Context) error { return p.Lock.Release(ctx) }
