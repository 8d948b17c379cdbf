package store

import (
	"errors"
	"reflect"
	"strconv"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// Commit is one write as the leader applies it: a compare-and-swap on one
// key, as the apiserver's writes to etcd are (a transaction on the key's
// mod revision).
type Commit struct {
	Key
	// Base is the resource version the write was made from: the live
	// record must still be at it. 0 is a create: the key must have no
	// live object.
	Base   uint64      `json:"base"`
	Delete bool        `json:"delete,omitempty"`
	Object kube.Object `json:"object,omitempty"`
}

// ErrStale is a Commit whose Base is no longer the key's live version:
// another write came first. The writer reads again and retries.
var ErrStale = errors.New("datastore: the record changed since it was read")

// Leader is where a server's writes go, so that the cluster has one
// order of writes.
type Leader interface {
	// Read returns the leader's record for k (ok false: none): a read
	// that sees every write committed before it.
	Read(k Key) (rec Record, ok bool, err error)
	// Commit applies c on the leader and returns the record written.
	Commit(c Commit) (Record, error)
	// Sync returns once this store holds every write the leader had
	// committed when Sync was called, as etcd's ReadIndex does for a
	// quorum read on a follower.
	Sync() error
}

// maxTries bounds how often a write retries after ErrStale; the apiserver
// retries until it wins, but a test double should not spin for ever.
const maxTries = 50

func (s *Store) leader() Leader {
	if s.Leader != nil {
		return s.Leader
	}
	return local{s}
}

// local is a store leading itself (no peers, or the store's unit tests).
type local struct{ s *Store }

func (l local) Read(k Key) (Record, bool, error) {
	r, ok := l.s.Record(k)
	return r, ok, nil
}

func (l local) Commit(c Commit) (Record, error) { return l.s.Apply(c) }

func (local) Sync() error { return nil }

// Sync makes the reads that follow it linearizable: they see every write
// committed before it, through any server, as the apiserver's reads from
// etcd do.
func (s *Store) Sync() error { return s.leader().Sync() }

// Create stores a new object, filling uid, creationTimestamp and
// resourceVersion.
func (s *Store) Create(k Key, obj kube.Object) (kube.Object, error) {
	obj = kube.DeepCopy(obj)
	kube.Set(obj, "metadata.name", k.Name)
	if k.Namespace != "" {
		kube.Set(obj, "metadata.namespace", k.Namespace)
	}
	if kube.Str(obj, "metadata.uid") == "" {
		kube.Set(obj, "metadata.uid", newUID())
	}
	if kube.Str(obj, "metadata.creationTimestamp") == "" {
		kube.Set(obj, "metadata.creationTimestamp", Now())
	}
	kube.Delete(obj, "metadata.resourceVersion")
	rec, err := s.leader().Commit(Commit{Key: k, Object: obj})
	if err != nil {
		return nil, err
	}
	return kube.DeepCopy(rec.Object), nil
}

// Update replaces an object with what fn makes of a copy of it, read from
// the leader, and retries with a fresh read when another write got in
// between: a read-modify-write that cannot lose a concurrent change, like
// the apiserver's GuaranteedUpdate. Identity fields (name, namespace, uid,
// creationTimestamp) cannot change. An update that changes nothing keeps
// the resource version, as the apiserver does.
func (s *Store) Update(k Key, fn func(kube.Object) (kube.Object, error)) (kube.Object, error) {
	l := s.leader()
	for try := 1; ; try++ {
		cur, ok, err := l.Read(k)
		if err != nil {
			return nil, err
		}
		if !ok || cur.Deleted {
			return nil, kube.NotFound(k.Resource, k.Name)
		}
		next, err := fn(kube.DeepCopy(cur.Object))
		if err != nil {
			return nil, err
		}
		for _, f := range []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.creationTimestamp", "metadata.resourceVersion"} {
			if v := kube.Get(cur.Object, f); v != nil {
				kube.Set(next, f, v)
			} else {
				kube.Delete(next, f)
			}
		}
		if reflect.DeepEqual(next, cur.Object) {
			return kube.DeepCopy(cur.Object), nil
		}
		rec, err := l.Commit(Commit{Key: k, Base: cur.RV, Object: next})
		switch {
		case errors.Is(err, ErrStale) && try < maxTries:
			continue
		case errors.Is(err, ErrStale):
			return nil, kube.Conflict(k.Resource, k.Name)
		case err != nil:
			return nil, err
		}
		return kube.DeepCopy(rec.Object), nil
	}
}

// Delete removes an object and returns its last state.
func (s *Store) Delete(k Key) (kube.Object, error) {
	l := s.leader()
	for try := 1; ; try++ {
		cur, ok, err := l.Read(k)
		if err != nil {
			return nil, err
		}
		if !ok || cur.Deleted {
			return nil, kube.NotFound(k.Resource, k.Name)
		}
		_, err = l.Commit(Commit{Key: k, Base: cur.RV, Delete: true})
		switch {
		case errors.Is(err, ErrStale) && try < maxTries:
			continue
		case errors.Is(err, ErrStale):
			return nil, kube.Conflict(k.Resource, k.Name)
		case err != nil:
			return nil, err
		}
		return kube.DeepCopy(cur.Object), nil
	}
}

// Apply is the leader's half of a write: check c against the key's
// current record and commit it with the next resource version, then push
// it to the other servers before answering.
func (s *Store) Apply(c Commit) (Record, error) {
	s.mu.Lock()
	cur, ok := s.recs[c.Key]
	live := ok && !cur.Deleted
	switch {
	case c.Base == 0 && live:
		s.mu.Unlock()
		return Record{}, kube.AlreadyExists(c.Resource, c.Name)
	case c.Base != 0 && (!live || cur.RV != c.Base):
		s.mu.Unlock()
		return Record{}, ErrStale
	}
	obj, event := kube.DeepCopy(c.Object), "MODIFIED"
	switch {
	case c.Delete:
		obj, event = kube.DeepCopy(cur.Object), "DELETED"
	case !live:
		event = "ADDED"
	}
	rec := s.commitLocked(c.Key, obj, c.Delete, event)
	s.mu.Unlock()
	if s.Replicate != nil {
		s.Replicate([]Record{rec})
	}
	rec.Object = kube.DeepCopy(rec.Object)
	return rec, nil
}

// commitLocked writes one new version, persists and notifies watchers.
func (s *Store) commitLocked(k Key, obj kube.Object, deleted bool, event string) Record {
	s.maxRV++
	kube.Set(obj, "metadata.resourceVersion", strconv.FormatUint(s.maxRV, 10))
	rec := Record{Key: k, RV: s.maxRV, Origin: s.origin, Deleted: deleted, Time: time.Now().UTC(), Object: obj}
	s.recs[k] = rec
	s.persistLocked()
	s.notifyLocked(Event{Type: event, Key: k, RV: rec.RV, Object: obj})
	return rec
}
