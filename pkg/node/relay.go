package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// RelayMinSize is the smallest file fan-out passes host to host: below it
// a relay's setup (a key authorized on the receiver, an ssh from the
// sender) costs more than sending the bytes from here.
const RelayMinSize = 1 << 20

// maxRelayFailures turns fan-out off for the rest of a phase when that
// many relays failed and none succeeded: the hosts cannot reach each
// other, and every further try would only add a timeout.
const maxRelayFailures = 2

type relaysKey struct{}

// WithFanout returns ctx with a fan-out scheduler for one upload phase
// (docs/apply.md, "Peer fan-out"): each file of RelayMinSize or more
// leaves this machine once, and every host that holds a verified copy
// passes it on to one other host at a time. Without it, or with
// Options.NoFanout or a dry run, Place sends every file from here.
func (s *Fleet) WithFanout(ctx context.Context) context.Context {
	if s.Options.NoFanout || s.Options.DryRun {
		return ctx
	}
	r := &relays{fleet: s, files: map[string]*relayFile{}, peers: map[*Host]*peerInfo{}}
	r.cond = sync.NewCond(&r.mu)
	return context.WithValue(ctx, relaysKey{}, r)
}

func relaysFrom(ctx context.Context) *relays {
	r, _ := ctx.Value(relaysKey{}).(*relays)
	return r
}

// relays is one phase's fan-out: who holds which file, who is serving.
type relays struct {
	fleet *Fleet

	mu        sync.Mutex
	cond      *sync.Cond
	files     map[string]*relayFile // by sha256
	peers     map[*Host]*peerInfo
	failures  int
	successes int
	off       bool
}

// relayFile is one file's holders: hosts with a verified copy at a path.
type relayFile struct {
	holders []relayHolder
	// fromHere is set while this machine sends the file to its first host.
	fromHere bool
}

type relayHolder struct {
	host *Host
	path string
	busy bool
}

// peerInfo is a receiver's sshd as ReadPeer found it, read once a phase.
type peerInfo struct {
	once sync.Once
	peer host.Peer
	err  error
}

// holds records that h has a verified copy of the file at path.
func (r *relays) holds(h *Host, sum, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.file(sum)
	for _, o := range f.holders {
		if o.host == h {
			return
		}
	}
	f.holders = append(f.holders, relayHolder{host: h, path: path})
	r.cond.Broadcast()
}

func (r *relays) file(sum string) *relayFile {
	f := r.files[sum]
	if f == nil {
		f = &relayFile{}
		r.files[sum] = f
	}
	return f
}

// fromHereDone ends this machine's send of a file to its first host; a
// failed one lets the next host waiting for the file send it instead.
func (r *relays) fromHereDone(sum string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.file(sum).fromHere = false
	r.cond.Broadcast()
}

// turn is what a host needing a file is told: send it from here, or take
// it from holder i.
type turn struct {
	fromHere bool
	holder   relayHolder
}

// wait blocks until h may take the file from a free holder, or must send
// it from here: nobody holds it and nobody is sending it. A cancelled ctx
// ends the wait.
func (r *relays) wait(ctx context.Context, h *Host, sum string) (turn, error) {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.cond.Broadcast()
	})
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.file(sum)
	for {
		if err := ctx.Err(); err != nil {
			return turn{}, err
		}
		if r.off {
			return turn{fromHere: true}, nil
		}
		for i := range f.holders {
			if o := &f.holders[i]; !o.busy && o.host != h {
				o.busy = true
				return turn{holder: *o}, nil
			}
		}
		if len(f.holders) == 0 && !f.fromHere {
			f.fromHere = true
			return turn{fromHere: true}, nil
		}
		r.cond.Wait()
	}
}

// release frees a holder after a relay, counting the outcome.
func (r *relays) release(sum string, from *Host, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, o := range r.files[sum].holders {
		if o.host == from {
			r.files[sum].holders[i].busy = false
		}
	}
	if ok {
		r.successes++
	} else {
		r.failures++
		if r.failures >= maxRelayFailures && r.successes == 0 {
			r.off = true
		}
	}
	r.cond.Broadcast()
}

// peer reads h's sshd as a relay receiver, once a phase.
func (r *relays) peer(ctx context.Context, h *Host) (host.Peer, error) {
	r.mu.Lock()
	pi := r.peers[h]
	if pi == nil {
		pi = &peerInfo{}
		r.peers[h] = pi
	}
	r.mu.Unlock()
	pi.once.Do(func() { pi.peer, pi.err = readPeer(ctx, h.Conn, h.Facts.PrivateAddress) })
	return pi.peer, pi.err
}

// readPeer reads r's sshd as a relay receiver: for its login user, as
// seen from address, the host's private address.
func readPeer(ctx context.Context, r host.Runner, address string) (host.Peer, error) {
	user, err := r.Run(ctx, "id -un")
	if err != nil {
		return host.Peer{}, fmt.Errorf("its login user: %w", err)
	}
	return host.ReadPeer(ctx, r, strings.TrimSpace(user), address)
}

// fanout is Place's part in a phase's fan-out for one file on one host.
type fanout struct {
	r        *relays
	h        *Host
	sum      string
	fromHere bool   // this host's upload is the file's send from here
	from     string // the holder it came from, "" when none
	failed   string // the holder a relay from failed, "" when none
}

// option is the upload's ViaPeer hook: it takes the file from a holder
// when one is free, waits for one while this machine or a holder is busy
// sending it, and sends it from here when nobody holds it.
func (f *fanout) option() host.UploadOption {
	return host.ViaPeer(func(ctx context.Context, part string, size int64) (host.PeerOutcome, error) {
		// read this host's sshd while it waits its turn, not after
		go func() { _, _ = f.r.peer(ctx, f.h) }()
		t, err := f.r.wait(ctx, f.h, f.sum)
		if err != nil {
			return host.PeerFailed, err
		}
		if t.fromHere {
			f.fromHere = true
			return host.PeerDeclined, nil
		}
		err = f.relay(ctx, t.holder, part, size)
		f.r.release(f.sum, t.holder.host, err == nil)
		if err != nil {
			f.failed = t.holder.host.String()
			return host.PeerFailed, err
		}
		f.from = t.holder.host.String()
		return host.PeerSent, nil
	})
}

func (f *fanout) relay(ctx context.Context, from relayHolder, part string, size int64) error {
	start := time.Now()
	to, err := f.r.peer(ctx, f.h)
	if err != nil {
		return err
	}
	peerRead := time.Since(start)
	n, err := host.Relay(ctx, from.host.Conn, from.host.Facts.PrivateAddress, from.path, f.h.Conn, to, part, size)
	// what a hop costs, for profiling fan-out (docs/bench.md, goal 5)
	f.r.fleet.Logger().Debug("relay", "host", f.h.String(), "from", from.host.String(), "file", from.path,
		"bytes", n, "peerRead", peerRead.Round(time.Millisecond).String(), "took", time.Since(start).Round(time.Millisecond).String(), "error", err)
	return err
}

// peerName is the holder a relay that did not work came from: one that
// failed, or one whose bytes did not check out on this host.
func (f *fanout) peerName() string {
	if f.failed != "" {
		return f.failed
	}
	return f.from
}

// done ends the file's upload on this host: a verified copy makes the
// host a holder, and a send from here is over either way.
func (f *fanout) done(dst string, ok bool) {
	if ok {
		f.r.holds(f.h, f.sum, dst)
	}
	if f.fromHere {
		f.r.fromHereDone(f.sum)
	}
}
