package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func hostsNamed(names ...string) Hosts {
	var hs Hosts
	for _, n := range names {
		hs = append(hs, &Host{Spec: &v1alpha1.Host{Hostname: n}})
	}
	return hs
}

func TestParallelCollectsEveryHostError(t *testing.T) {
	err := hostsNamed("kc0", "kw0", "kw1").Parallel(context.Background(), 2, func(_ context.Context, h *Host) error {
		if h.Spec.Hostname == "kc0" {
			return nil
		}
		return errors.New("no route")
	})
	var he *HostErrors
	require.ErrorAs(t, err, &he)
	assert.Equal(t, []string{"kw0", "kw1"}, he.Hosts())
	assert.Contains(t, err.Error(), "failed on 2 hosts")
}

// A cancellation must survive the per-host collection, or callers cannot
// tell an interrupted run from a failed one.
func TestParallelErrorsUnwrapToEachHostsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := hostsNamed("kc0", "kw0").Parallel(ctx, 1, func(context.Context, *Host) error { return nil })
	require.Error(t, err)
	require.ErrorIs(t, err, context.Canceled)

	sentinel := errors.New("sentinel")
	err = hostsNamed("kc0").Parallel(context.Background(), 0, func(context.Context, *Host) error { return sentinel })
	assert.ErrorIs(t, err, sentinel)
}

func TestParallelHoldsItsLimit(t *testing.T) {
	var running, peak atomic.Int32
	err := hostsNamed("a", "b", "c", "d", "e").Parallel(context.Background(), 2, func(context.Context, *Host) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(2), peak.Load())
}

func TestCollectKeepsHostOrder(t *testing.T) {
	hs := hostsNamed("kc0", "kw0", "kw1")
	got, err := Collect(context.Background(), hs, 0, func(_ context.Context, h *Host) ([]string, error) {
		if h.Spec.Hostname == "kc0" {
			time.Sleep(30 * time.Millisecond) // finishes last, still comes first
		}
		return []string{h.Spec.Hostname + "/a", h.Spec.Hostname + "/b"}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"kc0/a", "kc0/b", "kw0/a", "kw0/b", "kw1/a", "kw1/b"}, got)
}

func TestBatchesStopAfterAFailedBatch(t *testing.T) {
	var seen []string
	err := hostsNamed("a", "b", "c").Batches(context.Background(), 1, func(_ context.Context, h *Host) error {
		seen = append(seen, h.Spec.Hostname)
		if h.Spec.Hostname == "b" {
			return errors.New("down")
		}
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, []string{"a", "b"}, seen)
}
