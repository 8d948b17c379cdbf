package cli

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// lineProgress logs one line per finished upload, with its size and
// speed in human units: what a pipe, a file or a CI log can keep, where a
// redrawn bar would leave escape sequences and a line per redraw.
type lineProgress struct {
	log *slog.Logger
	now func() time.Time
}

func newLineProgress(log *slog.Logger) *lineProgress {
	return &lineProgress{log: log, now: time.Now}
}

func (l *lineProgress) Start(host, name string, size int64) node.Tracker {
	return &lineTracker{p: l, host: host, name: name, size: size, start: l.now()}
}

type lineTracker struct {
	p          *lineProgress
	host, name string
	size       int64
	start      time.Time
	sent       atomic.Int64 // Add runs per read, on the transfer's goroutine
}

func (t *lineTracker) Add(n int64) { t.sent.Add(n) }

func (t *lineTracker) Done(err error) {
	took := t.p.now().Sub(t.start)
	sent := t.sent.Load()
	args := []any{"host", t.host, "file", t.name, "sent", node.HumanBytes(sent)}
	if err != nil {
		// the phase reports the error; this says how far it got
		t.p.log.Warn("upload broke off", append(args, "of", node.HumanBytes(t.size))...)
		return
	}
	args = append(args, "took", took.Round(time.Millisecond))
	if s := speed(sent, took); s != "" {
		args = append(args, "speed", s)
	}
	t.p.log.Info("uploaded", args...)
}

// speed renders n bytes in d as "37.9 MiB/s"; "" when d is too short to
// tell.
func speed(n int64, d time.Duration) string {
	if d < time.Millisecond {
		return ""
	}
	return node.HumanBytes(int64(float64(n)/d.Seconds())) + "/s"
}
