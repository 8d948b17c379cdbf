package faults

import (
	"context"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// Phase titles the faults strike in (docs/apply.md, The phases).
const (
	uploadPhase = "Upload files to hosts"
	startPhase  = "Initialize Controller"
)

// enginePhases are the phases from the founder's start to the workers'
// join, in which the mid-engine-start kill may land.
var enginePhases = []string{startPhase, "Wait for the VIP", "Apply manifests", "Initialize Worker"}

// Throughput to a throttled host: slow enough to catch the blob half-way,
// fast enough not to hold the run up.
const slow = 3 << 20

// staleWait is long enough to outwait a lock's staleness, with room for
// the run's own start.
const staleWait = lockStale + time.Minute

// refusedWait is the second apply's --lock-wait in twoApplies: long
// enough for a few tries, lockPollEvery being a quarter of it.
const refusedWait = 6 * time.Second

// TestFaults brings up the faults fleet and breaks an apply on it one way
// after another; each fault ends with the fleet converged again, so the
// next starts from a known state (docs/e2e.md, Fault tests).
func TestFaults(t *testing.T) {
	// In-process runs read it here; the binary's runs are given it
	// (startApply).
	t.Setenv(phase.LockStaleEnv, lockStale.String())
	start := time.Now()
	w := setUp(t)
	t.Logf("set up in %s", time.Since(start).Round(time.Second))
	for _, f := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"operator-killed", operatorKilled},
		{"connection-cut", connectionCut},
		{"disk-full", diskFull},
		{"power-off", powerOff},
		{"two-applies", twoApplies},
		{"lock-race", lockRace},
		{"hostile-relay", hostileRelay},
	} {
		began := time.Now()
		ok := t.Run(f.name, func(t *testing.T) { f.run(t, w) })
		t.Logf("%s: %s", f.name, time.Since(began).Round(time.Second))
		if !ok {
			t.Fatalf("%s failed: the fleet is in no known state, so the faults after it are not run", f.name)
		}
	}
	t.Logf("all faults in %s", time.Since(start).Round(time.Second))
}

// operatorKilled (fault a): the operator is killed with SIGKILL in the
// middle of an upload, and the next run in the middle of starting the
// engine. Each leaves its lock; the next run waits for it to go stale and
// takes it over, resumes the partial upload, and the last one converges.
func operatorKilled(t *testing.T, w *world) {
	for _, h := range w.hosts {
		require.Equal(t, "inactive", w.unitState(t, h, "k3s"), "%s: the fault starts on hosts with no engine", h)
	}
	w.throttle(t, slow, w.hosts...)
	first := w.startApply(t, "run 1", "--lock-wait", staleWait.String())
	first.waitFor(t, 3*time.Minute, "the upload phase", phaseStarted(uploadPhase))
	w.waitPart(t, controller, 2<<20, first.done)
	first.kill9(t)

	kept := w.size(t, controller, blobPart)
	t.Logf("%s: %d of %d bytes of the blob arrived before the kill", controller, kept, blobSize)
	assert.Positive(t, kept)
	assert.Less(t, kept, int64(blobSize), "killed in the middle")
	assert.Equal(t, int64(-1), w.size(t, controller, blobTarget), "nothing is placed before it is verified")
	w.assertLock(t, first.id(), w.hosts...) // left behind, to go stale
	for _, h := range w.hosts {
		w.assertPlacedVerified(t, h)
	}

	w.throttle(t, 0, w.hosts...)
	second := w.startApply(t, "run 2", "--lock-wait", staleWait.String())
	// The lock is fresh: it waits, naming the holder; then it is stale and
	// taken over.
	waiting := second.waitFor(t, time.Minute, "a wait for the killed run's lock", msg("waiting for lock", "error", first.id()))
	t.Logf("run 2 found run 1's lock live: %s", waiting["error"]) // its age: the margin under lockStale
	for _, h := range w.hosts {
		second.waitFor(t, staleWait, h+"'s stale lock taken over", msg("taking over a stale lock", "host", h, "holder", first.id()))
	}
	resumed := second.waitFor(t, 2*time.Minute, "the blob's upload resumed", msg("resumed a broken upload", "host", controller, "file", blobTarget))
	assert.Equal(t, strconv.FormatInt(kept, 10), resumed["kept"], "the upload resumed where the killed run left it")
	assert.Equal(t, strconv.FormatInt(blobSize-kept, 10), resumed["sent"], "only the rest was sent")
	second.waitFor(t, 3*time.Minute, "the engine start", phaseStarted(startPhase))
	waitUntil(t, time.Minute, second.done, controller+"'s engine starting", func() bool {
		s := w.unitState(t, controller, "k3s")
		return s == "activating" || s == "active"
	})
	second.kill9(t)
	// The kill follows the unit's state, polled over ssh, and the test
	// engine comes up in well under a second: on a loaded machine the run
	// may already be starting the worker. Either way it dies among the
	// phases that start engines, which is the fault.
	phases := second.book.all(msg("running phase"))
	require.NotEmpty(t, phases)
	assert.Contains(t, enginePhases, phases[len(phases)-1]["phase"], "killed while starting an engine")
	_, ready := second.book.find(msg("node ready", "host", controller))
	_, workerJoined := second.book.find(msg("node ready", "host", worker))
	t.Logf("killed in %s with %s's engine %s (node ready logged: %v; %s: %v)", phases[len(phases)-1]["phase"], controller, w.unitState(t, controller, "k3s"), ready, worker, workerJoined)
	w.assertLock(t, second.id(), w.hosts...)
	for _, h := range w.hosts {
		w.assertPlacedVerified(t, h)
	}

	rep, book, _, err := w.run(t, false, staleWait)
	require.NoError(t, err, "the run after two kills converges")
	for _, h := range w.hosts {
		_, took := book.find(msg("taking over a stale lock", "host", h, "holder", second.id()))
		assert.True(t, took, "%s: the killed run's lock is taken over once stale", h)
	}
	if !workerJoined {
		assert.True(t, changed(rep, worker, "Initialize Worker", ""), "the worker the kills kept out joins")
	}
	nodes := clusterNodes(t, w)
	for _, h := range w.hosts {
		assert.True(t, nodes[h].Ready, "%s is a Ready node", h)
	}
	w.converged(t)
}

// connectionCut (fault b): the SSH connection an upload runs over drops.
// The apply fails naming the host and the phase; the partial file stays,
// never placed; the host's lock, which the broken connection could not
// release, goes stale; the rerun resumes the file and converges.
func connectionCut(t *testing.T, w *world) {
	w.removeBlob(t, worker)
	w.throttle(t, slow, worker)
	run := w.runBackground(t, 0)
	w.waitPart(t, worker, 2<<20, run.done)
	require.Positive(t, w.cutUploads(t, worker), "an sshd serving the upload was found and killed")
	_, err := run.wait(t, 3*time.Minute)
	require.Error(t, err, "an apply whose connection dropped mid-upload fails")
	for _, want := range []string{worker, uploadPhase, blobTarget} {
		assert.Contains(t, err.Error(), want, "the error names the host, the phase and the file")
	}
	assert.NotContains(t, err.Error(), controller+":", "only the cut host failed")
	w.throttle(t, 0, worker)

	kept := w.size(t, worker, blobPart)
	t.Logf("%s: %d of %d bytes of the blob arrived before the cut", worker, kept, blobSize)
	assert.Positive(t, kept)
	assert.Equal(t, int64(-1), w.size(t, worker, blobTarget), "nothing is placed before it is verified")
	w.assertPlacedVerified(t, worker)
	w.assertLock(t, "", controller) // released by the failed run
	w.assertLock(t, run.id, worker) // its connection was gone: left to go stale

	rep, book, _, err := w.run(t, false, staleWait)
	require.NoError(t, err)
	_, took := book.find(msg("taking over a stale lock", "host", worker, "holder", run.id))
	assert.True(t, took, "the cut host's lock is taken over once stale")
	resumed, ok := book.find(msg("resumed a broken upload", "host", worker, "file", blobTarget))
	if assert.True(t, ok, "the blob's upload resumed") {
		assert.Equal(t, strconv.FormatInt(kept, 10), resumed["kept"])
	}
	assert.Equal(t, blobSize-kept, uploadedBytes(rep, worker, blobTarget), "only the rest of the blob was sent")
	w.converged(t)
}

// diskFull (fault e): the disk under the blob's directory is too small
// (refused before a byte is written), then fills during the upload (the
// transfer fails saying so and keeps what arrived). Each error names the
// host and the directory, nothing is placed, the locks are released; once
// space is freed the rerun resumes and converges.
func diskFull(t *testing.T, w *world) {
	dir := path.Dir(blobTarget)
	mount := func(size string) {
		// mode 0755, as the directory it covers: a tmpfs is 1777 by default,
		// and uploads refuse a directory others may write
		w.in.Root(t, worker, "mount -t tmpfs -o mode=0755,size="+size+" cargoship-faults "+dir)
	}
	mount("16m")
	mounted := true
	t.Cleanup(func() {
		if mounted {
			w.in.Try(t, worker, "umount "+dir)
		}
	})

	_, _, _, err := w.run(t, false, 0)
	require.Error(t, err, "an upload the disk has no room for fails")
	for _, want := range []string{worker, uploadPhase, dir, "no space left", "nothing was written"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, w.in.Root(t, worker, "ls -A "+dir), "not a byte written on the full disk")
	w.assertLock(t, "", w.hosts...)

	w.in.Root(t, worker, "umount "+dir)
	mount("40m")
	w.throttle(t, slow, worker)
	run := w.runBackground(t, 0)
	w.waitPart(t, worker, 4<<20, run.done)
	w.in.Root(t, worker, "dd if=/dev/zero of="+dir+"/filler bs=1M 2>/dev/null; true") // another writer takes the rest
	_, err = run.wait(t, 2*time.Minute)
	require.Error(t, err, "an upload whose disk filled fails")
	for _, want := range []string{worker, uploadPhase, dir, "no space left", "filled during the transfer"} {
		assert.Contains(t, err.Error(), want)
	}
	w.throttle(t, 0, worker)
	kept := w.size(t, worker, blobPart)
	assert.Positive(t, kept, "what arrived is kept")
	assert.Equal(t, int64(-1), w.size(t, worker, blobTarget), "nothing is placed before it is verified")
	w.assertLock(t, "", w.hosts...)

	w.in.Root(t, worker, "rm "+dir+"/filler") // space is freed
	_, book, _, err := w.run(t, false, 0)
	require.NoError(t, err, "with space freed the rerun converges")
	resumed, ok := book.find(msg("resumed a broken upload", "host", worker, "file", blobTarget))
	if assert.True(t, ok, "the blob's upload resumed") {
		assert.Equal(t, strconv.FormatInt(kept, 10), resumed["kept"])
	}
	w.converged(t)
	// Back to the blob on the host's own disk, where the earlier faults
	// left it verified.
	w.in.Root(t, worker, "umount "+dir)
	mounted = false
	w.assertClean(t, worker)
}

// powerOff (fault c): the worker loses power in the middle of its upload.
// The apply fails naming it; the controller, which finished its own
// upload, is left consistent and its lock released; once the worker is
// back the rerun resumes its file and converges.
func powerOff(t *testing.T, w *world) {
	w.removeBlob(t, w.hosts...)
	// slow/4: the worker's upload must still be going once the
	// controller's blob is in place. At slow it had 8 s, and on CI's
	// loaded machine the controller's wait took them all and the run
	// ended first.
	w.throttle(t, slow/4, worker)
	run := w.runBackground(t, 0)
	waitUntil(t, 2*time.Minute, run.done, controller+"'s blob in place", func() bool { return w.size(t, controller, blobTarget) == blobSize })
	w.waitPart(t, worker, 2<<20, run.done)
	cut := time.Now()
	require.NoError(t, w.prov.PowerOff(context.Background(), fleetName, worker))
	w.in.Forget(worker)
	_, err := run.wait(t, 5*time.Minute)
	t.Logf("the apply gave up on the powered-off host after %s", time.Since(cut).Round(time.Second))
	require.Error(t, err, "an apply whose host lost power fails")
	for _, want := range []string{worker, uploadPhase} {
		assert.Contains(t, err.Error(), want, "the error names the host and the phase")
	}
	assert.NotContains(t, err.Error(), controller+":", "only the powered-off host failed")

	// The host that stayed up.
	w.assertLock(t, "", controller)
	w.assertPlacedVerified(t, controller)
	assert.Empty(t, w.leftovers(t, controller), "nothing half-way on the host that stayed up")
	assert.Equal(t, "active", w.unitState(t, controller, "k3s"), "its engine runs on")

	require.NoError(t, w.prov.PowerOn(context.Background(), fleetName, worker))
	kept := w.size(t, worker, blobPart)
	t.Logf("%s: %d of %d bytes of the blob survived the power cut", worker, kept, blobSize)
	assert.Equal(t, int64(-1), w.size(t, worker, blobTarget), "nothing is placed before it is verified")
	w.assertPlacedVerified(t, worker)
	w.assertLock(t, "", worker) // the lock lived in /run, which a boot empties

	_, book, _, err := w.run(t, false, 0)
	require.NoError(t, err, "with the host back the rerun converges")
	if kept > 0 {
		resumed, ok := book.find(msg("resumed a broken upload", "host", worker, "file", blobTarget))
		if assert.True(t, ok, "the blob's upload resumed") {
			assert.Equal(t, strconv.FormatInt(kept, 10), resumed["kept"])
		}
	}
	w.converged(t)
}

// twoApplies (fault d): a second apply while one runs waits for its lock
// and stops, naming the holder, having changed nothing; a third, with time
// to wait, proceeds once the first released its lock and finds nothing
// left to do.
func twoApplies(t *testing.T, w *world) {
	// Slow enough that A still uploads while the second apply gives up
	// and the third starts waiting; lifted once it does.
	w.removeBlob(t, w.hosts...)
	w.throttle(t, slow/4, w.hosts...)
	first := w.startApply(t, "apply A")
	first.waitFor(t, 2*time.Minute, "A's upload phase", phaseStarted(uploadPhase))
	w.assertLock(t, first.id(), w.hosts...)

	// --lock-wait is a bound on the retries, a quarter of it apart
	// (docs/apply.md, The lock): the last try begins three quarters in.
	began := time.Now()
	rep, book, _, err := w.run(t, false, refusedWait)
	require.Error(t, err, "a second apply while A holds the lock stops")
	t.Logf("the second apply stopped after %s: %v", time.Since(began).Round(time.Second), err)
	assert.Contains(t, err.Error(), first.id(), "the error names the holder")
	assert.Contains(t, err.Error(), phase.LockPath)
	assert.GreaterOrEqual(t, time.Since(began), refusedWait*5/6, "it waited, retrying, before it stopped")
	_, waited := book.find(msg("waiting for lock", "error", first.id()))
	assert.True(t, waited, "while waiting it logs the holder")
	assert.Empty(t, rep.Changes(), "the refused apply changed nothing")
	assert.Zero(t, rep.BytesUploaded())
	w.assertLock(t, first.id(), w.hosts...) // A's lock is not taken from it

	third := w.runBackground(t, 3*time.Minute)
	_, err = third.book.wait(context.Background(), third.done, msg("waiting for lock", "error", first.id()))
	require.NoError(t, err, "the third apply waits for A")
	w.throttle(t, 0, w.hosts...)
	require.NoError(t, first.wait(t, 3*time.Minute), "A finishes")
	rep, err = third.wait(t, 3*time.Minute)
	require.NoError(t, err, "the third apply proceeds once A released its lock")
	_, stale := third.book.find(msg("taking over a stale lock"))
	assert.False(t, stale, "A released its lock: nothing went stale")
	released, ok1 := first.book.find(phaseStarted("Release exclusive host lock"))
	locked, ok2 := third.book.find(phaseStarted("Prepare hosts"))
	if assert.True(t, ok1 && ok2, "A released its lock and the third apply went on") {
		at, err1 := time.Parse(time.RFC3339Nano, locked["time"])
		rel, err2 := time.Parse(time.RFC3339Nano, released["time"])
		require.NoError(t, err1)
		require.NoError(t, err2)
		assert.True(t, at.After(rel), "the third apply went past the lock (%s) only after A released it (%s)", at, rel)
	}
	assert.Empty(t, rep.Changes(), "A did the work: nothing is left for the third apply")
	assert.Zero(t, rep.BytesUploaded())
	w.converged(t)
}

// changed reports whether the run changed something on a host in a phase
// (and, when what is given, a change whose description holds it).
func changed(rep *node.Report, h, phaseTitle, what string) bool {
	for _, c := range rep.Changes() {
		if c.Host == h && c.Phase == phaseTitle && strings.Contains(c.What, what) {
			return true
		}
	}
	return false
}

// uploadedBytes is what a run sent for one file on one host.
func uploadedBytes(rep *node.Report, h, target string) int64 {
	var n int64
	for _, c := range rep.Changes() {
		if c.Host == h && strings.Contains(c.What, " to "+target+" ") {
			n += c.Bytes
		}
	}
	return n
}

// clusterNodes reads the cluster's nodes from inside the controller.
func clusterNodes(t *testing.T, w *world) map[string]node.Node {
	t.Helper()
	nodes, err := node.ParseNodes(w.in.Root(t, controller, "k3s kubectl get nodes -o json"))
	require.NoError(t, err)
	m := map[string]node.Node{}
	for _, n := range nodes {
		m[n.Name] = n
	}
	return m
}
