package retry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errFlaky = errors.New("flaky")

func TestDoRetriesUntilSuccess(t *testing.T) {
	n := 0
	err := Do(context.Background(), Policy{Wait: time.Millisecond}, func(context.Context) error {
		n++
		if n < 3 {
			return errFlaky
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func TestValueReturnsTheSucceedingAttemptsValue(t *testing.T) {
	n := 0
	v, err := Value(context.Background(), Policy{Wait: time.Millisecond}, func(context.Context) (int, error) {
		n++
		if n < 2 {
			return -1, errFlaky
		}
		return n, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, v)
}

func TestPermanentStopsAtOnceUnwrapped(t *testing.T) {
	n := 0
	err := Do(context.Background(), Policy{Wait: time.Millisecond}, func(context.Context) error {
		n++
		return Permanent(errFlaky)
	})
	assert.Same(t, errFlaky, err)
	assert.Equal(t, 1, n)
}

func TestPermanentOnTheLastAttemptIsUnwrapped(t *testing.T) {
	err := Do(context.Background(), Policy{Wait: time.Millisecond, Attempts: 1}, func(context.Context) error {
		return Permanent(errFlaky)
	})
	assert.Same(t, errFlaky, err)
}

func TestAttemptsRunOut(t *testing.T) {
	n := 0
	err := Do(context.Background(), Policy{Wait: time.Millisecond, Attempts: 3}, func(context.Context) error {
		n++
		return errFlaky
	})
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 3, ex.Attempts)
	require.ErrorIs(t, err, errFlaky)
	assert.Equal(t, "flaky", err.Error())
	assert.Equal(t, 3, n)
}

func TestTimeoutEndsTheAttemptUnderWay(t *testing.T) {
	start := time.Now()
	err := Do(context.Background(), Policy{Wait: time.Millisecond, Timeout: 50 * time.Millisecond}, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 1, ex.Attempts)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestTimeoutStopsBeforeAPauseThatWouldOutlastIt(t *testing.T) {
	start := time.Now()
	err := Do(context.Background(), Policy{Wait: time.Hour, Timeout: time.Minute}, func(context.Context) error { return errFlaky })
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 1, ex.Attempts)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestCallersContextEndingReturnsItsCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("interrupted")
	n := 0
	err := Do(ctx, Policy{Wait: time.Millisecond, Timeout: time.Minute}, func(context.Context) error {
		n++
		if n == 2 {
			cancel(cause)
		}
		return errFlaky
	})
	assert.Same(t, cause, err)
}

func TestWaitsDoubleUpToMaxWait(t *testing.T) {
	b := Policy{Wait: 250 * time.Millisecond, MaxWait: 5 * time.Second}.backOff()
	var got []time.Duration
	for range 7 {
		got = append(got, b.NextBackOff())
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{250 * ms, 500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, got)

	c := Policy{Wait: 2 * time.Second}.backOff()
	assert.Equal(t, 2*time.Second, c.NextBackOff())
	assert.Equal(t, 2*time.Second, c.NextBackOff())
	assert.Equal(t, time.Second, Policy{}.backOff().NextBackOff())
}

func TestLogsALinePerRetry(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := 0
	err := Do(context.Background(), Policy{Wait: time.Millisecond, Log: log, Message: "connect failed, retrying", Attrs: []any{"host", "kc0"}},
		func(context.Context) error {
			n++
			if n < 3 {
				return errFlaky
			}
			return nil
		})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `level=DEBUG msg="connect failed, retrying" host=kc0 attempt=1 in=1ms error=flaky`)
	assert.Contains(t, lines[1], "attempt=2")

	buf.Reset()
	_ = Do(context.Background(), Policy{Wait: time.Millisecond, Attempts: 2, Log: log, Level: slog.LevelWarn}, func(context.Context) error { return errFlaky })
	assert.Contains(t, buf.String(), `level=WARN msg=retrying attempt=1`)
	assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "no line for the last attempt: nothing follows it")
}
