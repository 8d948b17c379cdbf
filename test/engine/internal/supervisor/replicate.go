package supervisor

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// Replicator keeps the servers' datastores in step, standing in for etcd:
// every local write is pushed to the other servers before the write
// returns (so a read on another server sees it), and every server pulls
// every other server's records every few seconds (so one that was down
// catches up). The peers are the control-plane nodes. There is no quorum
// and no leader: any server accepts writes, and the newer record wins.
type Replicator struct {
	Client Client // URL unused; Flavor, Token (server) and CA set
	Store  *store.Store
	// Self is this server's node name, left out of the peers.
	Self string

	mu     sync.Mutex
	failed map[string]time.Time
	synced bool
}

// pullEvery is how often each peer is read in full.
const pullEvery = 2 * time.Second

// peers are the supervisor URLs of the other servers.
func (r *Replicator) peers() []string {
	var out []string
	for _, n := range r.Store.List("nodes", "") {
		if kube.Str(n, "metadata.name") == r.Self || !kube.IsControlPlane(n) {
			continue
		}
		if ip := kube.NodeInternalIP(n); ip != "" {
			out = append(out, "https://"+net.JoinHostPort(ip, strconv.Itoa(r.Client.Flavor.SupervisorPort)))
		}
	}
	return out
}

func (r *Replicator) client(url string) *Client {
	c := r.Client
	c.URL = url
	return &c
}

// Push sends local changes to every peer that answered recently; a peer
// that did not is skipped (it pulls what it missed when it is back).
func (r *Replicator) Push(recs []store.Record) {
	var wg sync.WaitGroup
	for _, url := range r.peers() {
		r.mu.Lock()
		skip := time.Since(r.failed[url]) < 10*time.Second
		r.mu.Unlock()
		if skip {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := r.client(url).Push(ctx, recs); err != nil {
				r.markFailed(url, err)
			}
		}()
	}
	wg.Wait()
}

func (r *Replicator) markFailed(url string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = map[string]time.Time{}
	}
	if _, known := r.failed[url]; !known || time.Since(r.failed[url]) > time.Minute {
		logx.Warnf("datastore: peer %s unreachable: %v", url, err)
	}
	r.failed[url] = time.Now()
}

// Synced reports whether a first round of pulls from every peer has
// been made (a peer that is down counts as done: there is nothing to get).
func (r *Replicator) Synced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.synced
}

// Run pulls every peer's records, at once and then every pullEvery, until
// ctx ends.
func (r *Replicator) Run(ctx context.Context) {
	t := time.NewTicker(pullEvery)
	defer t.Stop()
	for {
		r.pull(ctx)
		r.mu.Lock()
		r.synced = true
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Replicator) pull(ctx context.Context) {
	for _, url := range r.peers() {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := r.client(url).Snapshot(pctx)
		cancel()
		if err != nil {
			r.markFailed(url, err)
			continue
		}
		r.mu.Lock()
		delete(r.failed, url)
		r.mu.Unlock()
		r.Store.Merge(recs)
	}
}
