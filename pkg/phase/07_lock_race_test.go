package phase

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// raceWait is the racers' lock wait: the loser must find the winner's
// live lock within it, each step a shell of its own on a machine that the
// race detector and other suites load (2 s once ran out first).
const raceWait = 5 * time.Second

// racers are two runs, ids a and b, over the one host of s, b going on
// delay after both have read the stale lock.
func racers(s *node.Fleet, h host.Runner, stale string, delay time.Duration) [2]*node.Fleet {
	arrived := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var out [2]*node.Fleet
	for i, id := range []string{"run-a", "run-b"} {
		o := s.Options
		o.InstanceID = id
		f := node.New(s.Cluster, s.Distro, o, s.Log)
		f.Hosts[0].Conn = &hosttest.RaceRunner{Runner: h, Stale: stale, Arrived: arrived[i], Other: arrived[1-i], Delay: delay * time.Duration(i), Wait: 10 * time.Second}
		out[i] = f
	}
	return out
}

// TestLockTakeoverRaceHasOneWinner: two runs that read the same stale
// lock both try to take it over; exactly one holds it after, and the other
// finds that one's live lock and stops naming it. At once, the takeovers
// meet on the host; with b a little later, a's new lock is already there
// when b acts on what it read.
func TestLockTakeoverRaceHasOneWinner(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	for name, delay := range map[string]time.Duration{"at once": 0, "b later": 300 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			s, runners := k3sTestState(t)
			r := runners["c1"]
			ctx := context.Background()
			r.write(t, LockPath, "dead-1")
			old := time.Now().Add(-2 * lockStaleAfter)
			require.NoError(t, os.Chtimes(r.path(LockPath), old, old))

			runs := racers(s, r, "dead-1", delay)
			var locks [2]*AcquireLock
			var errs [2]error
			var wg sync.WaitGroup
			for i, f := range runs {
				locks[i] = &AcquireLock{Wait: raceWait}
				require.NoError(t, prepare(ctx, locks[i], f))
				wg.Go(func() { errs[i] = locks[i].Run(ctx) })
			}
			wg.Wait()

			var winners []string
			for i, err := range errs {
				if err == nil {
					winners = append(winners, runs[i].Options.InstanceID)
					defer func() { require.NoError(t, locks[i].Release(ctx)) }()
				}
			}
			require.Len(t, winners, 1, "exactly one run takes the stale lock (errors: %v)", errs)
			assert.Equal(t, winners[0], r.read(t, LockPath), "the lock is the winner's")
			for _, err := range errs {
				if err != nil {
					assert.ErrorContains(t, err, "another cargoship ("+winners[0]+") holds "+LockPath, "the loser waits for the winner's live lock")
				}
			}
		})
	}
}

// TestLockHolderWhoseLockWasTakenStops: a run whose lock another run took
// over (it went stale while this run was cut off) never touches the new
// holder's lock, and its next command on any host fails naming the host
// and the new holder; its release leaves that lock alone and fails too.
func TestLockHolderWhoseLockWasTakenStops(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t, "w1")
	s.Options.InstanceID = "me-1"
	s.Options.LookupEnv = func(k string) (string, bool) {
		if k == LockStaleEnv {
			return "4s", true
		}
		return "", false
	}
	ctx := context.Background()
	l := &AcquireLock{}
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))

	w1 := runners["w1"]
	w1.write(t, LockPath, "other-9") // taken over while we were away
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(w1.path(LockPath), old, old))

	var err error
	assert.Eventually(t, func() bool {
		_, err = s.Hosts[0].Conn.Sudo(ctx, "true") // c1: the run stops everywhere
		return err != nil
	}, 10*time.Second, 50*time.Millisecond, "the run's next command fails once the refresh finds the lock taken")
	require.Error(t, err)
	require.ErrorContains(t, err, "w1")
	require.ErrorContains(t, err, "another cargoship (other-9) holds "+LockPath)
	fi, serr := os.Stat(w1.path(LockPath))
	require.NoError(t, serr)
	assert.True(t, fi.ModTime().Equal(old), "the refresh never touches another run's lock")

	var lost *LockLostError
	relErr := l.Release(ctx)
	require.ErrorAs(t, relErr, &lost, "the release says the lock was lost")
	assert.Equal(t, "w1", lost.Host)
	assert.Equal(t, "other-9", w1.read(t, LockPath), "the new holder's lock is left alone")
	_, serr = os.Stat(runners["c1"].path(LockPath))
	require.ErrorIs(t, serr, os.ErrNotExist, "the lock still ours is released")
	_, err = s.Hosts[0].Conn.Sudo(ctx, "true")
	require.NoError(t, err, "released, the connection is the run's own again")
}
