package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

var nodeKey = Key{Resource: "nodes", Name: "n1"}

// State survives a restart: it is read back from state.json.
func TestStatePersistsAcrossOpen(t *testing.T) {
	t.Setenv(hostfs.RootEnv, t.TempDir())
	s, err := Open("/var/lib/rancher/k3s/server/db/state.json", "srv1")
	require.NoError(t, err)
	created, err := s.Create(nodeKey, kube.Object{"metadata": map[string]any{"labels": map[string]any{"a": "1"}}})
	require.NoError(t, err)
	assert.NotEmpty(t, kube.Str(created, "metadata.uid"))
	_, err = s.Create(Key{Resource: "pods", Namespace: "ns", Name: "p"}, kube.Object{})
	require.NoError(t, err)
	_, err = s.Delete(Key{Resource: "pods", Namespace: "ns", Name: "p"})
	require.NoError(t, err)

	again, err := Open("/var/lib/rancher/k3s/server/db/state.json", "srv1")
	require.NoError(t, err)
	got, ok := again.Get(nodeKey)
	require.True(t, ok)
	assert.Equal(t, created, got)
	assert.Empty(t, again.List("pods", ""), "the deletion persisted too")
	assert.Equal(t, s.RV(), again.RV())
}

// An update that changes nothing keeps the resource version; identity
// fields cannot be changed.
func TestUpdate(t *testing.T) {
	s, _ := Open("", "srv1")
	created, err := s.Create(nodeKey, kube.Object{"spec": map[string]any{}})
	require.NoError(t, err)
	same, err := s.Update(nodeKey, func(o kube.Object) (kube.Object, error) { return o, nil })
	require.NoError(t, err)
	assert.Equal(t, kube.Str(created, "metadata.resourceVersion"), kube.Str(same, "metadata.resourceVersion"))
	changed, err := s.Update(nodeKey, func(o kube.Object) (kube.Object, error) {
		kube.Set(o, "metadata.uid", "forged")
		kube.Set(o, "spec.unschedulable", true)
		return o, nil
	})
	require.NoError(t, err)
	assert.Equal(t, kube.Str(created, "metadata.uid"), kube.Str(changed, "metadata.uid"))
	assert.NotEqual(t, kube.Str(created, "metadata.resourceVersion"), kube.Str(changed, "metadata.resourceVersion"))
}

// Between servers the newer record wins, deletions included, and a
// merge moves the clock so later local writes are newer still.
func TestMergeKeepsTheNewerRecord(t *testing.T) {
	a, _ := Open("", "a")
	b, _ := Open("", "b")
	_, err := a.Create(nodeKey, kube.Object{"v": "a1"})
	require.NoError(t, err)
	assert.Equal(t, 1, b.Merge(a.Snapshot()))
	_, err = b.Update(nodeKey, func(o kube.Object) (kube.Object, error) { o["v"] = "b2"; return o, nil })
	require.NoError(t, err)
	assert.Equal(t, 1, a.Merge(b.Snapshot()))
	assert.Equal(t, 0, a.Merge(b.Snapshot()), "nothing new the second time")
	got, _ := a.Get(nodeKey)
	assert.Equal(t, "b2", got["v"])

	_, err = a.Delete(nodeKey)
	require.NoError(t, err)
	b.Merge(a.Snapshot())
	_, ok := b.Get(nodeKey)
	assert.False(t, ok, "the tombstone replicates")
	assert.Equal(t, 0, a.Merge([]Record{{Key: nodeKey, RV: 1, Origin: "z", Object: kube.Object{"v": "old"}}}), "an old record does not resurrect it")
}

// A watch from a resource version gets what changed since, deletions
// included.
func TestSinceAndSubscribe(t *testing.T) {
	s, _ := Open("", "a")
	_, _ = s.Create(nodeKey, kube.Object{})
	rv := s.RV()
	ch, cancel := s.Subscribe()
	defer cancel()
	_, _ = s.Create(Key{Resource: "nodes", Name: "n2"}, kube.Object{})
	_, _ = s.Delete(nodeKey)
	since := s.Since("nodes", rv)
	require.Len(t, since, 2)
	assert.Equal(t, "n2", since[0].Key.Name)
	assert.Equal(t, "DELETED", since[1].Type)
	assert.Equal(t, "ADDED", (<-ch).Type)
	assert.Equal(t, "DELETED", (<-ch).Type)
}
