package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// lockRace (issue 39, item 2): two runs that read the same stale lock
// race to take it over, and exactly one holds it after; an apply whose
// lock is taken from it stops before its next change. It starts and ends
// with the fleet converged and no lock on it; run alone (-run
// TestFaults/lock-race), it converges the fresh fleet first.
func lockRace(t *testing.T, w *world) {
	w.assertLock(t, "", w.hosts...)
	if w.unitState(t, controller, "k3s") != "active" {
		_, _, _, err := w.run(t, false, 0)
		require.NoError(t, err, "the fresh fleet converges")
	}
	t.Run("takeover", func(t *testing.T) { takeoverRace(t, w) })
	t.Run("holder-stops", func(t *testing.T) { holderStops(t, w) })
	w.assertLock(t, "", w.hosts...)
}

// raceRounds are the rounds of takeoverRace: how long the second run lets
// pass, after both read the stale lock, before it acts on what it read.
// At once the two takeovers meet on the host; half a second later the
// first one's new lock is already in place.
var raceRounds = []time.Duration{0, 0, 0, time.Second / 2, time.Second / 2}

// takeoverRace plants a stale lock on the controller, and two runs of
// phase 7, each over a connection of its own, both read it before either
// takes it over: one takes it, the other finds the winner's live lock and
// stops naming it.
func takeoverRace(t *testing.T, w *world) {
	spec := w.hostSpec(t, controller)
	for round, delay := range raceRounds {
		stale := fmt.Sprintf("faults-stale-%d-%d", os.Getpid(), round)
		ids := []string{fmt.Sprintf("faults-race-a-%d-%d", os.Getpid(), round), fmt.Sprintf("faults-race-b-%d-%d", os.Getpid(), round)}
		w.plantStaleLock(t, controller, stale)
		t.Cleanup(func() { w.removeLock(t, controller, append(ids, stale)...) })

		arrived := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		locks := make([]*phase.AcquireLock, 2)
		books := make([]*logbook, 2)
		errs := make([]error, 2)
		for i, id := range ids {
			log, book := recordingLogger(t)
			books[i] = book
			conn := &hosttest.RaceRunner{Runner: w.connect(t, spec), Stale: stale, Arrived: arrived[i], Other: arrived[1-i], Delay: delay * time.Duration(i), Wait: 30 * time.Second}
			f := &node.Fleet{
				Hosts:   node.Hosts{&node.Host{Spec: &spec, Conn: conn}},
				Options: node.Options{InstanceID: id, Concurrency: 1, LookupEnv: os.LookupEnv},
				Report:  &node.Report{},
				Log:     log,
			}
			locks[i] = &phase.AcquireLock{Wait: 5 * time.Second} // the loser's wait: room for a loaded host
			phase.Bind(locks[i], f)
			require.NoError(t, locks[i].Prepare(context.Background()))
		}
		var wg sync.WaitGroup
		for i := range locks {
			wg.Go(func() { errs[i] = locks[i].Run(context.Background()) })
		}
		wg.Wait()

		var winners []int
		for i, err := range errs {
			if err == nil {
				winners = append(winners, i)
			}
		}
		holder, _ := w.lockHolder(t, controller)
		t.Logf("round %d (b %s later): %s holds the lock; errors %v", round, delay, holder, errs)
		for _, i := range winners {
			require.NoError(t, locks[i].Release(context.Background()), "the winner releases its lock")
		}
		require.Len(t, winners, 1, "round %d: exactly one run takes the stale lock", round)
		win, lose := winners[0], 1-winners[0]
		assert.Equal(t, ids[win], holder, "round %d: the lock is the winner's", round)
		require.ErrorContains(t, errs[lose], "another cargoship ("+ids[win]+") holds "+phase.LockPath, "round %d: the loser waits for the winner's live lock", round)
		_, took := books[win].find(msg("taking over a stale lock", "host", controller, "holder", stale))
		assert.True(t, took, "round %d: the winner logs the takeover", round)
		_, took = books[lose].find(msg("taking over a stale lock"))
		assert.False(t, took, "round %d: the loser took nothing over", round)
		w.assertLock(t, "", controller)
	}
}

// stopsThrottle is holderStops' throughput to the worker: the blob takes
// 48 s, and the refresh finds the lock taken within 15 s (half the stale
// age) of the takeover, long before the blob would be placed.
const stopsThrottle = 512 << 10

// holderStops: an apply's lock on the worker is taken from it in the
// middle of the worker's upload, as another run takes over a lock gone
// stale while its holder was cut off. The apply stops before its next
// change there (the blob is never placed), naming the host and the new
// holder, releases its other lock and leaves the new holder's alone.
func holderStops(t *testing.T, w *world) {
	w.removeBlob(t, worker)
	w.throttle(t, stopsThrottle, worker)
	run := w.runBackground(t, 0)
	w.waitPart(t, worker, 1<<20, run.done)
	thief := fmt.Sprintf("faults-thief-%d", os.Getpid())
	t.Cleanup(func() { w.removeLock(t, worker, thief) })
	w.in.Root(t, worker, host.Script(`t=$1.thief; printf %s "$2" > "$t" && mv -f -- "$t" "$1"`, phase.LockPath, thief))
	took := time.Now()

	_, err := run.wait(t, 3*time.Minute)
	require.Error(t, err, "the apply whose lock was taken fails")
	t.Logf("the apply stopped %s after its lock was taken: %v", time.Since(took).Round(time.Second), err)
	for _, want := range []string{worker, thief, phase.LockPath, "lock on " + worker + " was lost"} {
		assert.Contains(t, err.Error(), want, "the error names the host and the new holder")
	}
	lost, ok := run.book.find(msg("lock lost", "host", worker, "holder", thief))
	if assert.True(t, ok, "the refresh found the lock taken") {
		at, perr := time.Parse(time.RFC3339Nano, lost["time"])
		require.NoError(t, perr)
		assert.Less(t, at.Sub(took), lockStale/2+5*time.Second, "found by the next refresh")
	}
	assert.Equal(t, int64(-1), w.size(t, worker, blobTarget), "the apply stopped before placing the blob, its next change")
	w.assertPlacedVerified(t, worker)
	w.assertLock(t, thief, worker) // the new holder's lock is left alone
	w.assertLock(t, "", controller)

	// Back as it was: the new holder is gone, the rerun converges.
	w.removeLock(t, worker, thief)
	w.throttle(t, 0, worker)
	_, _, _, err = w.run(t, false, 0)
	require.NoError(t, err, "with the lock free again the rerun converges")
	w.converged(t)
}

// hostSpec is a host's entry in the fleet's inventory.
func (w *world) hostSpec(t *testing.T, name string) v1alpha1.Host {
	t.Helper()
	c, _, err := v1alpha1.LoadClusterFile(w.inventory)
	require.NoError(t, err)
	i := slices.IndexFunc(c.Spec.Hosts, func(h v1alpha1.Host) bool { return h.Hostname == name })
	require.GreaterOrEqual(t, i, 0, "no host %s in the inventory", name)
	return c.Spec.Hosts[i]
}

// connect opens a connection of its own to a host, closed when t ends.
func (w *world) connect(t *testing.T, spec v1alpha1.Host) *host.Conn {
	t.Helper()
	c, err := host.Connect(context.Background(), &spec, host.ConnectOptions{KnownHostsPath: w.fleet.KnownHostsPath})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// plantStaleLock leaves on a host the lock a killed run would leave,
// holding holder, last touched twice the stale age ago.
func (w *world) plantStaleLock(t *testing.T, h, holder string) {
	t.Helper()
	w.in.Root(t, h, host.Script(`mkdir -p -m 700 -- "$(dirname -- "$1")" && (umask 077 && set -C && printf %s "$2" > "$1") && touch -d "@$(( $(date +%s) - $3 ))" -- "$1"`,
		phase.LockPath, holder, strconv.Itoa(int(2*lockStale/time.Second))))
}

// removeLock removes a host's lock if it holds one of holders: what a
// subtest left, never a lock of anyone else's.
func (w *world) removeLock(t *testing.T, h string, holders ...string) {
	t.Helper()
	if got, ok := w.lockHolder(t, h); ok && slices.Contains(holders, got) {
		w.in.Root(t, h, host.Script(`rm -f -- "$1"`, phase.LockPath))
	}
}
