package host

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// MaxOutput is how much a command may print on stdout that Run keeps, or
// on stderr, before it is stopped: a broken or hostile host must not fill
// this machine's memory.
const MaxOutput = 16 << 20

// OutputLimitError is a command stopped for printing more than its bound.
type OutputLimitError struct {
	Host   string
	Cmd    string // the first line, shortened, secrets masked
	Stream string // "stdout" or "stderr"
	Limit  int64
}

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("%s: `%s` printed more than %s on %s: stopped", e.Host, e.Cmd, byteSize(e.Limit), e.Stream)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// summary is the first line of cmd, at most 80 characters, for a message
// about a command whose full text may be a long script.
func summary(cmd string) string {
	first, _, more := strings.Cut(strings.TrimSpace(cmd), "\n")
	if r := []rune(first); len(r) > 80 {
		first, more = string(r[:80]), true
	}
	if more {
		first += " …"
	}
	return first
}

var (
	errOverLimit = errors.New("output over its limit")
	errDone      = errors.New("the command has returned")
)

// limitWriter passes writes on until max bytes have gone through (max < 0:
// no bound), then calls over once and fails every later write. After done
// it fails every write, so nothing lands in a buffer the caller now reads.
type limitWriter struct {
	mu       sync.Mutex
	w        io.Writer
	max, n   int64
	over     func()
	exceeded bool
	closed   bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return 0, errDone
	case l.exceeded:
		return 0, errOverLimit
	case l.max >= 0 && l.n+int64(len(p)) > l.max:
		l.exceeded = true
		l.over()
		return 0, errOverLimit
	}
	l.n += int64(len(p))
	return l.w.Write(p)
}

// done stops every later write and reports whether the bound was passed.
func (l *limitWriter) done() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.exceeded
}
