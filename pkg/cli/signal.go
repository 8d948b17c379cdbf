package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalContext is cancelled by the first SIGINT or SIGTERM, so running work
// can release locks and close connections; a second signal exits at once.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			_, _ = fmt.Fprintln(os.Stderr, "interrupted: cleaning up (interrupt again to exit now)")
			cancel()
		case <-ctx.Done():
			return
		}
		<-ch
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}
