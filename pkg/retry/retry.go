// Package retry runs an operation again until it succeeds, on
// github.com/cenkalti/backoff/v5 with cargoship's conventions: waits that
// double without jitter up to a cap (or stay constant), an optional log line
// per failed attempt, an overall timeout that also ends the attempt under
// way, and errors that say why retrying stopped: a Permanent error from the
// operation is returned as it is, the caller's context ending returns its
// cause, and running out of time or attempts returns an *ExhaustedError
// holding the last attempt's error.
package retry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Policy says how often and how long to try.
type Policy struct {
	// Wait is the pause after the first failure; 0 means one second.
	Wait time.Duration
	// MaxWait caps the pause, which doubles after every failure; a MaxWait
	// of 0 or not above Wait keeps every pause at Wait (a constant poll).
	MaxWait time.Duration
	// Timeout bounds the attempts and the pauses between them together:
	// the attempt under way sees its context end with it, and no attempt
	// starts that could not begin before it. 0 means only ctx bounds them.
	Timeout time.Duration
	// Attempts bounds how many times the operation runs; 0 means no bound.
	Attempts int

	// Log receives a line for each failed attempt that will be retried:
	// Message, then Attrs, then "attempt" (1 for the first), "in" (the
	// pause before the next) and "error". nil logs nothing.
	Log *slog.Logger
	// Level is the level of those lines; nil means slog.LevelDebug.
	Level slog.Leveler
	// Message is those lines' message; "" means "retrying".
	Message string
	// Attrs are key-value pairs that name what is retried ("host", name).
	Attrs []any
}

// ExhaustedError is returned when the attempts or the Timeout ran out
// before the operation succeeded. Its message is the last attempt's.
type ExhaustedError struct {
	// Attempts is how many times the operation ran.
	Attempts int
	// Err is the last attempt's error.
	Err error
}

func (e *ExhaustedError) Error() string { return e.Err.Error() }
func (e *ExhaustedError) Unwrap() error { return e.Err }

// Permanent marks err as one that retrying cannot fix: the operation
// returns it, and Do returns err at once. Permanent(nil) is nil.
func Permanent(err error) error { return backoff.Permanent(err) }

// Do runs op until it returns nil, then returns nil. It returns op's error
// unwrapped at once when op returns Permanent(err); context.Cause(ctx) when
// ctx ends first; otherwise, when p's Attempts or Timeout run out, an
// *ExhaustedError with the last error.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	_, err := Value(ctx, p, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) })
	return err
}

// Value is Do for an operation that also returns a value: the value of
// the attempt that succeeded.
func Value[T any](ctx context.Context, p Policy, op func(ctx context.Context) (T, error)) (T, error) {
	actx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	var (
		attempts  int
		last      error
		permanent bool
	)
	v, err := backoff.Retry(actx, func() (T, error) {
		attempts++
		v, err := op(actx)
		var pe *backoff.PermanentError
		if permanent = errors.As(err, &pe); permanent {
			err = pe.Err
		}
		last = err
		if permanent {
			return v, backoff.Permanent(err)
		}
		return v, err
	}, p.options(ctx, &attempts)...)
	switch {
	case err == nil:
		return v, nil
	case permanent:
		return v, last
	case ctx.Err() != nil:
		return v, context.Cause(ctx)
	}
	return v, &ExhaustedError{Attempts: attempts, Err: last}
}

func (p Policy) options(ctx context.Context, attempts *int) []backoff.RetryOption {
	opts := []backoff.RetryOption{
		backoff.WithBackOff(p.backOff()),
		backoff.WithMaxElapsedTime(p.Timeout), // 0 turns off backoff's own 15 minutes
	}
	if p.Attempts > 0 {
		opts = append(opts, backoff.WithMaxTries(uint(p.Attempts)))
	}
	if p.Log != nil {
		level := p.Level
		if level == nil {
			level = slog.LevelDebug
		}
		msg := p.Message
		if msg == "" {
			msg = "retrying"
		}
		opts = append(opts, backoff.WithNotify(func(err error, next time.Duration) {
			args := append(append([]any{}, p.Attrs...), "attempt", *attempts, "in", next, "error", err)
			p.Log.Log(ctx, level.Level(), msg, args...)
		}))
	}
	return opts
}

func (p Policy) backOff() backoff.BackOff {
	wait := p.Wait
	if wait <= 0 {
		wait = time.Second
	}
	if p.MaxWait <= wait {
		return backoff.NewConstantBackOff(wait)
	}
	return &backoff.ExponentialBackOff{InitialInterval: wait, Multiplier: 2, MaxInterval: p.MaxWait}
}
