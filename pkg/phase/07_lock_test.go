package phase

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcquireLockWaitsOutALiveHolderAndTakesOverAStaleOne(t *testing.T) {
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	ctx := context.Background()

	r.write(t, LockPath, "other-7")
	live := &AcquireLock{Wait: time.Second}
	require.NoError(t, prepare(ctx, live, s))
	err := live.Run(ctx)
	require.ErrorContains(t, err, "another cargoship (other-7) holds "+LockPath)
	assert.Equal(t, "other-7", r.read(t, LockPath), "a live holder's lock is left alone")

	old := time.Now().Add(-2 * lockStaleAfter)
	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	stale := &AcquireLock{Wait: time.Second}
	require.NoError(t, prepare(ctx, stale, s))
	require.NoError(t, stale.Run(ctx))
	assert.Equal(t, "me-1", r.read(t, LockPath), "a stale lock is taken over")

	require.NoError(t, stale.Release(ctx))
	_, err = os.Stat(r.path(LockPath))
	require.ErrorIs(t, err, os.ErrNotExist, "releasing removes our lock")

	again := &AcquireLock{Wait: time.Second}
	require.NoError(t, prepare(ctx, again, s))
	require.NoError(t, again.Run(ctx))
	r.write(t, LockPath, "other-7") // taken over while we held it
	require.NoError(t, again.Release(ctx))
	assert.Equal(t, "other-7", r.read(t, LockPath), "releasing never removes another run's lock")
}
