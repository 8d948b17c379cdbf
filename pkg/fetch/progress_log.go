package fetch

import (
	"log/slog"
	"sync"
	"time"
)

// LogProgress reports transfers as log lines, at most one per interval per
// transfer: what a CI log or a redirected terminal can keep.
type LogProgress struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time
}

// NewLogProgress reports through log every interval (DefaultLogInterval
// when zero).
func NewLogProgress(log *slog.Logger, every time.Duration) *LogProgress {
	if every <= 0 {
		every = DefaultLogInterval
	}
	return &LogProgress{log: log, every: every, now: time.Now}
}

// Start begins reporting one transfer.
func (l *LogProgress) Start(name string, total int64) ProgressTask {
	now := l.now()
	return &logTask{p: l, name: name, total: total, start: now, last: now}
}

// Wait has nothing to flush: every line is written when reported.
func (l *LogProgress) Wait() {}

type logTask struct {
	p     *LogProgress
	name  string
	total int64

	mu       sync.Mutex
	done     int64
	start    time.Time
	last     time.Time
	reported bool
}

func (t *logTask) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done += int64(len(b))
	if now := t.p.now(); now.Sub(t.last) >= t.p.every {
		t.last = now
		t.reported = true
		t.p.log.Info("transferring", t.attrs(now)...)
	}
	return len(b), nil
}

func (t *logTask) SetCurrent(n int64) {
	t.mu.Lock()
	t.done = n
	t.mu.Unlock()
}

// Done closes a transfer that was reported along the way with a final line;
// short transfers stay silent (the caller logs the outcome).
func (t *logTask) Done(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.reported {
		return
	}
	args := t.attrs(t.p.now())
	if err != nil {
		t.p.log.Warn("transfer failed", append(args, "error", err)...)
		return
	}
	t.p.log.Info("transferred", args...)
}

func (t *logTask) attrs(now time.Time) []any {
	args := []any{"name", t.name, "bytes", t.done}
	if t.total > 0 {
		args = append(args, "total", t.total, "percent", t.done*100/t.total)
	}
	return append(args, "elapsed", now.Sub(t.start).Round(time.Second))
}
