package release

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// goreleaserCommand is how Build runs goreleaser: go run links it once and
// keeps the executable in the build cache (Go 1.24 on), and with -exec
// echo prints that executable's path instead of running it, so the path
// can be had while the release tool builds. Where the printed file is gone
// (a go that caches no executable) it is go run itself.
func (o Options) goreleaserCommand(ctx context.Context) ([]string, error) {
	cmd := o.command(ctx, nil, "go", "run", "-exec", "echo", Goreleaser)
	if _, err := fmt.Fprintf(cmd.Stderr, "$ %s\n", strings.Join(cmd.Args, " ")); err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go run %s: %w", Goreleaser, err)
	}
	exe := strings.TrimSpace(string(out))
	if fi, err := os.Stat(exe); err != nil || !fi.Mode().IsRegular() {
		return []string{"go", "run", Goreleaser}, nil
	}
	return []string{exe}, nil
}

// lockedWriter serialises writes to w, which commands run at once share;
// nil stays nil (the commands then write to this process's own output).
func lockedWriter(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &locked{w: w}
}

type locked struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
