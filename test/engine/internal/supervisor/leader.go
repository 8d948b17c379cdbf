package supervisor

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// Leadership stands in for etcd's raft leader: one server applies every
// write, so the cluster has one order of writes. The double runs no raft
// vote; every server applies one rule to what its peers say (choose):
// follow a reachable server that leads, else let the smallest caught-up
// server lead. Leadership stays where it is while its holder answers, as
// raft's does, so a server that comes back (the founder after a restart)
// follows rather than taking it back with what it missed.

// View is what a server says of leadership, at <supervisor>/db/leader.
type View struct {
	Name   string `json:"name"`
	Leader string `json:"leader"`
	// Ready: the server has pulled from every peer once, so it may lead.
	Ready bool `json:"ready"`
	// RV is the newest resource version the server holds.
	RV uint64 `json:"rv"`
}

// View is this server's view.
func (r *Replicator) View() View {
	rv := r.Store.RV()
	r.mu.Lock()
	defer r.mu.Unlock()
	return View{Name: r.Self, Leader: r.leader, Ready: r.synced, RV: rv}
}

// Leads reports whether this server applies the cluster's writes.
func (r *Replicator) Leads() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leader == r.Self
}

// elect asks every peer for its view and follows choose. A server that
// is to lead first pulls from every peer, so it holds every write the
// last leader pushed before it takes new ones.
func (r *Replicator) elect(ctx context.Context) {
	if !r.Synced() {
		return
	}
	views := r.views(ctx)
	r.mu.Lock()
	cur := r.leader
	r.mu.Unlock()
	next := choose(r.Self, cur, views)
	if next == cur {
		return
	}
	if next == r.Self {
		r.pull(ctx)
	}
	r.mu.Lock()
	r.leader = next
	r.mu.Unlock()
	logx.Infof("datastore: %s leads the cluster's writes (was %q)", next, cur)
}

// views asks the peers at once; one that does not answer within a second
// is left out, as a raft member that cannot be reached gets no say.
func (r *Replicator) views(ctx context.Context) map[string]View {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out = map[string]View{}
	)
	for _, p := range r.peers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			v, err := r.client(p.url).Leadership(pctx)
			if err != nil || v.Name != p.name {
				return
			}
			// It answers: pushes to it resume at once, rather than
			// after markFailed's pause, so it is not left behind.
			r.markUp(p.url)
			mu.Lock()
			out[p.name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// choose is who leads, from this server's name, whom it follows now and
// what the reachable peers say. A server that leads in its own view is
// followed; if two do (two servers that started at the same moment), the
// smaller name keeps it. When none does, the smallest ready server takes
// it; self counts as ready, since elect runs only once it has pulled.
func choose(self, cur string, views map[string]View) string {
	var leaders []string
	if cur == self {
		leaders = append(leaders, self)
	}
	for name, v := range views {
		if v.Leader == name {
			leaders = append(leaders, name)
		}
	}
	if len(leaders) > 0 {
		sort.Strings(leaders)
		return leaders[0]
	}
	candidates := []string{self}
	for name, v := range views {
		if v.Ready {
			candidates = append(candidates, name)
		}
	}
	sort.Strings(candidates)
	return candidates[0]
}

// drop forgets leader name after a call to it failed, and asks for an
// election: the next call waits for its outcome.
func (r *Replicator) drop(name string) {
	r.mu.Lock()
	if r.leader == name {
		r.leader = ""
	}
	r.mu.Unlock()
	select {
	case r.kicks() <- struct{}{}:
	default:
	}
}

func (r *Replicator) kicks() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kick == nil {
		r.kick = make(chan struct{}, 1)
	}
	return r.kick
}
