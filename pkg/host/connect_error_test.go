package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/retry"
)

// TestConnectTimeoutNamesTheLastAnswer: when the connect timeout ends a
// try midway (a loaded operator, a slow ssh), the error still says what
// the host answered the time before, not only that time ran out.
func TestConnectTimeoutNamesTheLastAnswer(t *testing.T) {
	refused := errors.New("ssh: connect to host 127.0.0.1 port 22: Connection refused")
	a := &attempts{}
	_ = a.record(context.Background(), refused)
	cut, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-cut.Done()
	_ = a.record(cut, cut.Err())

	err := connectFailed(context.Background(), "web-1", ConnectOptions{Timeout: 2 * time.Second}, time.Now(),
		a, &retry.ExhaustedError{Attempts: 2, Err: cut.Err()})
	msg := err.Error()
	if !strings.Contains(msg, "Connection refused") || !strings.Contains(msg, "the connect timeout being 2s (2 attempts)") {
		t.Errorf("error = %q; want the refusal of the try before the cut one", msg)
	}

	// a try that ends on its own answer is the one reported
	b := &attempts{}
	_ = b.record(context.Background(), errors.New("first"))
	_ = b.record(context.Background(), refused)
	err = connectFailed(context.Background(), "web-1", ConnectOptions{Timeout: 2 * time.Second}, time.Now(),
		b, &retry.ExhaustedError{Attempts: 2, Err: refused})
	if !errors.Is(err, refused) {
		t.Errorf("error = %v; want the last try's own answer", err)
	}
}
