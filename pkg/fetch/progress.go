package fetch

import (
	"io"
	"log/slog"
	"time"
)

// Progress shows transfers while they run. A nil Progress shows nothing.
type Progress interface {
	// Start begins one transfer of total bytes (-1 when unknown).
	Start(name string, total int64) ProgressTask
}

// ProgressTask is one running transfer: bytes are written to it as they
// arrive, and Done is called once at the end.
type ProgressTask interface {
	io.Writer
	Done(err error)
}

// Display is a Progress the caller waits on before printing anything else,
// so a terminal's bars are drawn to the end.
type Display interface {
	Progress
	Wait()
}

// currentSetter is implemented by tasks that can move back, for a download
// that must start again from zero.
type currentSetter interface {
	SetCurrent(n int64)
}

func setProgress(t ProgressTask, n int64) {
	if s, ok := t.(currentSetter); ok {
		s.SetCurrent(n)
	}
}

// NewProgress picks how to show transfers on w: live bars on a terminal,
// otherwise a plain log line every few seconds per transfer.
func NewProgress(w io.Writer, isTerminal bool) Display {
	if isTerminal {
		return newBarProgress(w)
	}
	return NewLogProgress(slog.New(slog.NewTextHandler(w, nil)), DefaultLogInterval)
}

// DefaultLogInterval is how often plain progress reports a running transfer.
const DefaultLogInterval = 5 * time.Second
