// Package store is the test engine's datastore: every API object the
// cluster holds, kept in memory and persisted atomically to
// <data-dir>/server/db/state.json after each change, so state survives a
// restart (and an upgrade) the way etcd's does.
//
// Writes are linearizable, as etcd's are: each is a compare-and-swap on
// one key that the cluster's leader applies (see write.go), so a write a
// server accepts is never lost to a concurrent write through another
// server, and a write made from a stale read fails. The leader pushes
// what it commits to the other servers (see Merge), which read their copy
// once Sync has caught them up. Which server leads is decided outside the
// store (the supervisor's Replicator); there is no quorum.
package store

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// tombstoneTTL is how long a deleted record is remembered, so a peer that
// was away does not bring the object back.
const tombstoneTTL = time.Hour

// Key names one object.
type Key struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Record is one object's latest version, or its tombstone.
type Record struct {
	Key
	RV      uint64      `json:"rv"`
	Origin  string      `json:"origin"`
	Deleted bool        `json:"deleted,omitempty"`
	Time    time.Time   `json:"time"`
	Object  kube.Object `json:"object,omitempty"`
}

// newer reports whether r supersedes o.
func (r Record) newer(o Record) bool {
	return r.RV > o.RV || (r.RV == o.RV && r.Origin > o.Origin)
}

// Event is one change, as a watch delivers it.
type Event struct {
	Type   string // ADDED, MODIFIED, DELETED
	Key    Key
	RV     uint64
	Object kube.Object
}

// Store holds the objects.
type Store struct {
	mu     sync.Mutex
	origin string
	path   string
	recs   map[Key]Record
	maxRV  uint64
	subs   map[chan Event]struct{}

	// Replicate, when set, is called with every change this store
	// commits as the leader, before the write returns to its caller.
	Replicate func([]Record)
	// Leader, when set, is where writes go: this store's own Apply when
	// it leads, the leading server otherwise. Unset, the store is a
	// cluster of one and applies its writes itself.
	Leader Leader
}

type stateFile struct {
	RV      uint64   `json:"rv"`
	Records []Record `json:"records"`
}

// Open loads the store persisted at path (an engine path; "" keeps it in
// memory only). origin names this server in the records it writes.
func Open(path, origin string) (*Store, error) {
	s := &Store{origin: origin, path: path, recs: map[Key]Record{}, subs: map[chan Event]struct{}{}}
	if path == "" {
		return s, nil
	}
	data, err := hostfs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s.maxRV = st.RV
	for _, r := range st.Records {
		s.recs[r.Key] = r
	}
	return s, nil
}

// RV is the newest resource version this store has seen.
func (s *Store) RV() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRV
}

// Get returns a copy of one object.
func (s *Store) Get(k Key) (kube.Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	if !ok || r.Deleted {
		return nil, false
	}
	return kube.DeepCopy(r.Object), true
}

// Record returns a copy of one key's record, tombstone included: what a
// leader answers a follower's read with.
func (s *Store) Record(k Key) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	if ok {
		r.Object = kube.DeepCopy(r.Object)
	}
	return r, ok
}

// List returns copies of a resource's objects in namespace ns ("" for
// all), sorted by namespace and name as the apiserver lists them.
func (s *Store) List(resource, ns string) []kube.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []Key
	for k, r := range s.recs {
		if k.Resource == resource && !r.Deleted && (ns == "" || k.Namespace == ns) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Namespace != keys[j].Namespace {
			return keys[i].Namespace < keys[j].Namespace
		}
		return keys[i].Name < keys[j].Name
	})
	out := make([]kube.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, kube.DeepCopy(s.recs[k].Object))
	}
	return out
}

// Since returns the changes to a resource after resource version rv, for
// a watch that starts from a list.
func (s *Store) Since(resource string, rv uint64) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for k, r := range s.recs {
		if k.Resource != resource || r.RV <= rv {
			continue
		}
		t := "MODIFIED"
		if r.Deleted {
			t = "DELETED"
		}
		out = append(out, Event{Type: t, Key: k, RV: r.RV, Object: kube.DeepCopy(r.Object)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RV < out[j].RV })
	return out
}

// Snapshot is every record, tombstones included, for a peer.
func (s *Store) Snapshot() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, r)
	}
	return out
}

// persistLocked writes state.json, dropping old tombstones first. A
// datastore that cannot write stops the server, as etcd failing stops the
// real one; systemd then restarts it from what is on disk.
func (s *Store) persistLocked() {
	if s.path == "" {
		return
	}
	st := stateFile{RV: s.maxRV}
	for k, r := range s.recs {
		if r.Deleted && time.Since(r.Time) > tombstoneTTL {
			delete(s.recs, k)
			continue
		}
		st.Records = append(st.Records, r)
	}
	sort.Slice(st.Records, func(i, j int) bool { return st.Records[i].RV < st.Records[j].RV })
	data, err := json.Marshal(st)
	if err == nil {
		err = hostfs.WriteFile(s.path, data, 0o600)
	}
	if err != nil {
		logx.Fatalf("datastore: write %s: %v", s.path, err)
	}
}

// Subscribe delivers every later change until cancel. A subscriber that
// falls behind is dropped (its channel closed), as an apiserver ends a
// slow watch; the client lists again.
func (s *Store) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 256)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
	}
}

func (s *Store) notifyLocked(e Event) {
	for ch := range s.subs {
		select {
		case ch <- Event{Type: e.Type, Key: e.Key, RV: e.RV, Object: kube.DeepCopy(e.Object)}:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// Now is a timestamp as the API writes them.
func Now() string { return time.Now().UTC().Format(time.RFC3339) }

// newUID is a random RFC 4122 version 4 UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
