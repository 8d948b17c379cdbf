package faults

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// entry is one log line of a run: its message and attributes, by key, as
// text. A line that is not a log record (the CLI's final error) is kept
// whole under "msg" with "raw" set.
type entry map[string]string

func (e entry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", e["time"], e["level"], e["msg"])
	keys := slices.Sorted(maps.Keys(e))
	for _, k := range keys {
		if k != "msg" && k != "time" && k != "level" {
			fmt.Fprintf(&b, " %s=%q", k, e[k])
		}
	}
	return b.String()
}

// logbook keeps a run's log lines so a test can wait for one and search
// them afterwards, from a subprocess's JSON lines or from a logger in this
// process.
type logbook struct {
	mu      sync.Mutex
	entries []entry
	added   chan struct{} // closed and replaced on every line
}

func newLogbook() *logbook { return &logbook{added: make(chan struct{})} }

func (b *logbook) add(e entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries = append(b.entries, e)
	close(b.added)
	b.added = make(chan struct{})
}

// find returns the first line that matches.
func (b *logbook) find(match func(entry) bool) (entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.entries {
		if match(e) {
			return e, true
		}
	}
	return nil, false
}

// all returns every line that matches.
func (b *logbook) all(match func(entry) bool) []entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []entry
	for _, e := range b.entries {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// wait blocks until a line matches, ctx ends or done closes (the run
// ended without it).
func (b *logbook) wait(ctx context.Context, done <-chan struct{}, match func(entry) bool) (entry, error) {
	for {
		b.mu.Lock()
		next := b.added
		b.mu.Unlock()
		if e, ok := b.find(match); ok {
			return e, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			if e, ok := b.find(match); ok {
				return e, nil
			}
			return nil, fmt.Errorf("the run ended first")
		case <-next:
		}
	}
}

// msg matches a line by message and, pairwise, attributes that contain
// the given text.
func msg(message string, kv ...string) func(entry) bool {
	return func(e entry) bool {
		if e["msg"] != message {
			return false
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if !strings.Contains(e[kv[i]], kv[i+1]) {
				return false
			}
		}
		return true
	}
}

// phaseStarted matches the line a real run logs as it starts a phase.
func phaseStarted(title string) func(entry) bool { return msg("running phase", "phase", title) }

// recorder is a slog.Handler that keeps every record in a logbook and
// passes it on to the test log.
type recorder struct {
	book  *logbook
	next  slog.Handler
	attrs []slog.Attr
}

// recordingLogger logs through the test log and into a new logbook.
func recordingLogger(t testing.TB) (*slog.Logger, *logbook) {
	b := newLogbook()
	return slog.New(&recorder{book: b, next: e2eutil.TestLogger(t).Handler()}), b
}

func (r *recorder) Enabled(ctx context.Context, l slog.Level) bool { return r.next.Enabled(ctx, l) }

func (r *recorder) Handle(ctx context.Context, rec slog.Record) error {
	e := entry{"msg": rec.Message, "level": rec.Level.String(), "time": rec.Time.Format(time.RFC3339Nano)}
	for _, a := range r.attrs {
		e[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool {
		e[a.Key] = a.Value.String()
		return true
	})
	r.book.add(e)
	return r.next.Handle(ctx, rec)
}

func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &recorder{book: r.book, next: r.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), r.attrs...), as...)}
}

func (r *recorder) WithGroup(name string) slog.Handler {
	return &recorder{book: r.book, next: r.next.WithGroup(name), attrs: r.attrs}
}
