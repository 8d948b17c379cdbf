package hosttest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// RaceRunner is one run's view of a host shared with another run, for
// racing two runs on one stale lock. Once a command's output holds Stale
// (the run has read the lock), it closes Arrived, waits until Other is
// closed (the other run has read it too) or Wait has passed, then lets
// Delay pass: both runs judge the same lock stale before either acts.
type RaceRunner struct {
	host.Runner
	Stale   string
	Arrived chan struct{}
	Other   chan struct{}
	Delay   time.Duration
	Wait    time.Duration
	once    sync.Once
}

// Sudo runs cmd, and holds the run back as RaceRunner says.
func (r *RaceRunner) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	out, err := r.Runner.Sudo(ctx, cmd, opts...)
	if strings.Contains(out, r.Stale) {
		r.once.Do(func() {
			close(r.Arrived)
			select {
			case <-r.Other:
			case <-time.After(r.Wait):
			}
			time.Sleep(r.Delay)
		})
	}
	return out, err
}
