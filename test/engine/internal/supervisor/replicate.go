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

// Replicator keeps the servers' datastores in step, standing in for etcd.
// One server leads (leader.go) and applies every write (forward.go); it
// pushes each to the other servers before the write returns, so a read
// on any server sees it, and every server pulls every other server's
// records every few seconds, so one that was down catches up. The peers
// are the control-plane nodes. There is no quorum: a lone server leads
// itself, as the double's clusters have always kept working on one.
type Replicator struct {
	Client Client // URL unused; Flavor, Token (server) and CA set
	Store  *store.Store
	// Self is this server's node name, left out of the peers.
	Self string

	mu     sync.Mutex
	failed map[string]time.Time
	synced bool
	leader string        // "" until elected
	kick   chan struct{} // asks for an election now
}

// tickEvery is how often leadership is checked; every pullTicks-th tick
// each peer is read in full.
const (
	tickEvery = time.Second
	pullTicks = 2
)

// peer is another server: its node name and supervisor URL.
type peer struct{ name, url string }

// peers are the other servers.
func (r *Replicator) peers() []peer {
	var out []peer
	for _, n := range r.Store.List("nodes", "") {
		name := kube.Str(n, "metadata.name")
		if name == r.Self || !kube.IsControlPlane(n) {
			continue
		}
		if ip := kube.NodeInternalIP(n); ip != "" {
			out = append(out, peer{name, "https://" + net.JoinHostPort(ip, strconv.Itoa(r.Client.Flavor.SupervisorPort))})
		}
	}
	return out
}

func (r *Replicator) client(url string) *Client {
	r.mu.Lock()
	if r.Client.Shared == nil {
		r.Client.Shared = r.Client.HTTPClient(nil)
	}
	c := r.Client
	r.mu.Unlock()
	c.URL = url
	return &c
}

// Push sends local changes to every peer that answered recently; a peer
// that did not is skipped (it pulls what it missed when it is back).
func (r *Replicator) Push(recs []store.Record) {
	var wg sync.WaitGroup
	for _, p := range r.peers() {
		url := p.url
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

// markUp notes that the peer at url answered.
func (r *Replicator) markUp(url string) {
	r.mu.Lock()
	delete(r.failed, url)
	r.mu.Unlock()
}

// Synced reports whether a first round of pulls from every peer has
// been made (a peer that is down counts as done: there is nothing to get).
func (r *Replicator) Synced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.synced
}

// Run pulls every peer's records, at once and then every pullTicks
// ticks, and checks who leads after the first pull, every tick and when
// a forwarded call asks, until ctx ends.
func (r *Replicator) Run(ctx context.Context) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for tick := 0; ; tick++ {
		if tick%pullTicks == 0 {
			r.pull(ctx)
			r.mu.Lock()
			r.synced = true
			r.mu.Unlock()
		}
		r.elect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kicks():
		}
	}
}

func (r *Replicator) pull(ctx context.Context) {
	for _, p := range r.peers() {
		url := p.url
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := r.client(url).Snapshot(pctx)
		cancel()
		if err != nil {
			r.markFailed(url, err)
			continue
		}
		r.markUp(url)
		r.Store.Merge(recs)
	}
}
