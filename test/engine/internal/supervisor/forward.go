package supervisor

import (
	"context"
	"errors"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// The Replicator is the store's Leader: a server that leads applies a
// write itself; one that follows sends it to the leader's supervisor
// (/db/commit) and reads the record a write starts from there
// (/db/record), as an apiserver's writes and quorum reads go to etcd's
// leader whichever server it runs on.

// leaderWait is how long a call waits for a leader to be elected or to
// answer, as etcd's client retries through a leader change before it
// reports "request timed out".
const leaderWait = 30 * time.Second

// errNotLeader is a server's answer to a call meant for the leader when
// it does not lead (any more, or yet).
var errNotLeader = errors.New("datastore: not the leader")

var _ store.Leader = (*Replicator)(nil)

// Read returns the leader's record for k.
func (r *Replicator) Read(k store.Key) (rec store.Record, ok bool, err error) {
	err = r.onLeader(func() error {
		rec, ok = r.Store.Record(k)
		return nil
	}, func(ctx context.Context, c *Client) error {
		rec, ok, err = c.Read(ctx, k)
		return err
	})
	return rec, ok, err
}

// Commit has the leader apply c. A follower keeps the record the leader
// wrote at once, so a read on it after the write sees the write even if
// the leader's push to it was skipped.
func (r *Replicator) Commit(c store.Commit) (rec store.Record, err error) {
	err = r.onLeader(func() error {
		rec, err = r.Store.Apply(c)
		return err
	}, func(ctx context.Context, cl *Client) error {
		if rec, err = cl.Commit(ctx, c); err == nil {
			r.Store.Merge([]store.Record{rec})
		}
		return err
	})
	return rec, err
}

// Sync catches this server up with the leader when it holds less than
// the leader does (a push to it was missed), before a read.
func (r *Replicator) Sync() error {
	return r.onLeader(func() error { return nil }, func(ctx context.Context, c *Client) error {
		v, err := c.Leadership(ctx)
		switch {
		case err != nil:
			return err
		case v.Leader != v.Name:
			return errNotLeader
		case v.RV <= r.Store.RV():
			return nil
		}
		recs, err := c.Snapshot(ctx)
		if err == nil {
			r.Store.Merge(recs)
		}
		return err
	})
}

// onLeader runs here when this server leads, else on the leader, waiting
// through an election and following the leader when it moves, for up to
// leaderWait. Only transport failures and "not the leader" are retried:
// the leader's own answers (ErrStale, API errors) are the caller's.
func (r *Replicator) onLeader(here func() error, there func(context.Context, *Client) error) error {
	deadline := time.Now().Add(leaderWait)
	for {
		name, url := r.leaderAddr()
		switch {
		case name == r.Self:
			return here()
		case url == "":
			// No leader yet, or its node is gone from the cluster.
			r.drop(name)
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := there(ctx, r.client(url))
			cancel()
			if err == nil || !retriable(err) {
				return err
			}
			if !errors.Is(err, errNotLeader) {
				r.markFailed(url, err)
			}
			r.drop(name)
		}
		if time.Now().After(deadline) {
			return kube.Unavailable("etcdserver: request timed out, waiting for a datastore leader")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// retriable reports whether err says nothing about the write itself: the
// leader could not be reached, or was not the leader.
func retriable(err error) bool {
	var apiErr *kube.Error
	return !errors.Is(err, store.ErrStale) && !errors.As(err, &apiErr)
}

// leaderAddr is the leader's name and, for a peer, its supervisor URL
// ("" while no leader is known or its address is not).
func (r *Replicator) leaderAddr() (name, url string) {
	r.mu.Lock()
	name = r.leader
	r.mu.Unlock()
	if name == "" || name == r.Self {
		return name, ""
	}
	for _, p := range r.peers() {
		if p.name == name {
			return name, p.url
		}
	}
	return name, ""
}
