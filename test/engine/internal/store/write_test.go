package store

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// viaLeader is a follower's Leader in memory: reads and commits go to the
// leading store, and the follower keeps what the leader wrote, as the
// supervisor's Replicator does over HTTP.
type viaLeader struct{ leader, self *Store }

func (v viaLeader) Read(k Key) (Record, bool, error) {
	r, ok := v.leader.Record(k)
	return r, ok, nil
}

func (v viaLeader) Commit(c Commit) (Record, error) {
	rec, err := v.leader.Apply(c)
	if err == nil {
		v.self.Merge([]Record{rec})
	}
	return rec, err
}

func (v viaLeader) Sync() error {
	if v.leader.RV() > v.self.RV() {
		v.self.Merge(v.leader.Snapshot())
	}
	return nil
}

// pair is a leader and a follower; the leader pushes only when push is
// set, so a test can leave the follower's copy behind.
func pair(t *testing.T, push bool) (leader, follower *Store) {
	t.Helper()
	leader, _ = Open("", "a")
	follower, _ = Open("", "b")
	follower.Leader = viaLeader{leader: leader, self: follower}
	if push {
		leader.Replicate = func(recs []Record) { follower.Merge(recs) }
	}
	return leader, follower
}

// Writes sent at once through both servers to one object all survive:
// each is a read-modify-write the leader orders, never one record
// replacing another.
func TestConcurrentWritesThroughTwoServersAllSurvive(t *testing.T) {
	leader, follower := pair(t, true)
	_, err := follower.Create(nodeKey, kube.Object{"metadata": map[string]any{}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 40 {
		s := leader
		if i%2 == 1 {
			s = follower
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(nodeKey, func(o kube.Object) (kube.Object, error) {
				kube.Set(o, "metadata.labels.l"+fmt.Sprint(i), "set")
				return o, nil
			})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	for _, s := range []*Store{leader, follower} {
		got, ok := s.Get(nodeKey)
		require.True(t, ok)
		labels, _ := kube.Get(got, "metadata.labels").(map[string]any)
		assert.Len(t, labels, 40, "every write kept on %s", s.origin)
	}
	assert.Equal(t, leader.RV(), follower.RV())
}

// A follower's update starts from the leader's record, not from its own
// copy, however far behind that copy is; a commit from an old version is
// refused; create and delete go through the leader too.
func TestAFollowerWritesFromTheLeadersRecord(t *testing.T) {
	leader, follower := pair(t, false)
	_, err := follower.Create(nodeKey, kube.Object{"v": "1"})
	require.NoError(t, err)
	_, err = follower.Create(nodeKey, kube.Object{})
	var apiErr *kube.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "AlreadyExists", apiErr.Status.Reason)

	old, _ := leader.Record(nodeKey)
	_, err = leader.Update(nodeKey, func(o kube.Object) (kube.Object, error) { o["v"] = "2"; return o, nil })
	require.NoError(t, err)
	mine, _ := follower.Get(nodeKey)
	require.Equal(t, "1", mine["v"], "the follower's copy is behind: nothing was pushed")

	got, err := follower.Update(nodeKey, func(o kube.Object) (kube.Object, error) {
		assert.Equal(t, "2", o["v"], "fn sees the leader's record")
		o["w"] = "3"
		return o, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "2", got["v"])
	assert.Equal(t, "3", got["w"])

	_, err = leader.Apply(Commit{Key: nodeKey, Base: old.RV, Object: kube.Object{"v": "stale"}})
	require.ErrorIs(t, err, ErrStale, "a commit from an old version")

	require.NoError(t, follower.Sync())
	mine, _ = follower.Get(nodeKey)
	assert.Equal(t, "3", mine["w"], "after Sync the follower reads what the leader holds")

	_, err = follower.Delete(nodeKey)
	require.NoError(t, err)
	_, ok := leader.Get(nodeKey)
	assert.False(t, ok)
	_, ok = follower.Get(nodeKey)
	assert.False(t, ok, "the follower keeps the leader's tombstone")
}
