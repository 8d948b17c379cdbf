package host

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// TestEmptyStdinEndsTheCommand: a command given an empty stdin sees its
// end and exits. sshd keeps a session channel's window shut and ignores
// its EOF until the command runs, so stdin must follow the exec request:
// an EOF sent before it left `cat` waiting for ever (a unit run hung 25
// minutes writing an empty file). Whether the old order lost the race
// depends on scheduling, hence many tries, eight at a time.
func TestEmptyStdinEndsTheCommand(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for name, c := range f.modes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 40 {
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						out, err := c.Run(ctx, "cat; echo end", WithStdin(bytes.NewReader(nil)))
						cancel()
						if err != nil || out != "end\n" {
							t.Errorf("worker %d, try %d: %q, %v; want the command to see its stdin end", w, i, out, err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
