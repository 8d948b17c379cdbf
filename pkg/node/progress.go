package node

import (
	"context"
	"io"
)

// Progress shows uploads while they run: the CLI draws bars on a terminal
// and logs lines elsewhere. It lives in the run's context rather than in
// Options because it is the caller's display, not part of what the run
// does; no Progress (the provider, tests) shows nothing.
type Progress interface {
	// Start begins one transfer of size bytes to host: what will be sent,
	// which for a resumed upload is only the part not yet on the host.
	// It is called only when bytes are about to be sent, never for a skip.
	Start(host, name string, size int64) Tracker
}

// Tracker is one running transfer. Add may be called from any goroutine;
// Done is called once, after the last Add.
type Tracker interface {
	Add(n int64)
	Done(err error)
}

// ProgressBatcher is a Progress that wants to know when a host's run of
// uploads (one phase's files for that host) begins and ends, to keep one
// bar per host across its files. Begin returns the function that ends it.
type ProgressBatcher interface {
	Begin(host string) (end func())
}

type progressKey struct{}

// WithProgress makes the uploads run under ctx report to p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, p)
}

func progressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// beginUploads tells a batching Progress that h's uploads start; the
// returned function ends them. Calls may nest.
func beginUploads(ctx context.Context, h *Host) func() {
	if b, ok := progressFrom(ctx).(ProgressBatcher); ok {
		return b.Begin(h.String())
	}
	return func() {}
}

// uploadTracking starts a Tracker when Upload is about to send, and
// finishes it once Upload returns.
type uploadTracking struct {
	p       Progress
	host    string
	name    string
	size    int64
	tracker Tracker
}

// wrap is the host.WrapSend hook: it counts the bytes as Upload reads them
// to send, the cheapest place to count (one atomic add per read).
func (u *uploadTracking) wrap(offset int64, r io.Reader) io.Reader {
	u.tracker = u.p.Start(u.host, u.name, u.size-offset)
	return &trackedReader{r: r, t: u.tracker}
}

func (u *uploadTracking) done(err error) {
	if u.tracker != nil {
		u.tracker.Done(err)
	}
}

type trackedReader struct {
	r io.Reader
	t Tracker
}

func (t *trackedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.t.Add(int64(n))
	}
	return n, err
}
