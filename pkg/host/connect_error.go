package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonel-byte/cargoship/pkg/retry"
)

// attempts counts a connect's tries and keeps the last one's error: the
// caller's deadline ends a retry with only the context's error.
type attempts struct {
	n    int
	last error
	// cut: the latest try ended because the context did
	cut bool
}

// record counts one try. An attempt the context cut short says only
// that; the one before it, if any, says why the host did not answer.
func (a *attempts) record(ctx context.Context, err error) error {
	a.n++
	a.cut = err != nil && ctx.Err() != nil
	if err != nil && (!a.cut || a.last == nil) {
		a.last = err
	}
	return err
}

// connectFailed says why connecting gave up, with what actually ended it:
// the connect timeout (o.Timeout, the retry's own), or the caller's
// deadline or cancel, which may come long before it. err is what the
// retry returned.
func connectFailed(parent context.Context, name string, o ConnectOptions, start time.Time, a *attempts, err error) error {
	took := time.Since(start).Round(100 * time.Millisecond)
	var ex *retry.ExhaustedError
	switch {
	case errors.As(err, &ex):
		// The timeout can end an attempt midway, leaving only the
		// context's error; the attempt before it says why the host did
		// not answer.
		last := ex.Err
		if a.cut && a.last != nil {
			last = a.last
		}
		return fmt.Errorf("host %s: gave up connecting after %s, the connect timeout being %s (%d attempts): %w", name, took, o.Timeout, ex.Attempts, last)
	case parent.Err() == nil || !errors.Is(err, context.Cause(parent)):
		return err
	}
	why := "the connect was cancelled"
	if errors.Is(parent.Err(), context.DeadlineExceeded) {
		why = "its deadline passed"
	}
	if a.last == nil {
		return fmt.Errorf("host %s: gave up connecting after %s, when %s: %w", name, took, why, parent.Err())
	}
	return fmt.Errorf("host %s: gave up connecting after %s, when %s (%d attempts; the last: %w): %w", name, took, why, a.n, a.last, parent.Err())
}
