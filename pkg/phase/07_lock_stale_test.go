package phase

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

func TestLockStaleReadsTheVariable(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) { return v, k == LockStaleEnv }
	}
	for v, want := range map[string]time.Duration{"": lockStaleAfter, "15s": 15 * time.Second, "2m": 2 * time.Minute, "4s": lockStaleMin} {
		got, err := lockStale(env(v))
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	got, err := lockStale(nil)
	require.NoError(t, err)
	assert.Equal(t, lockStaleAfter, got, "no environment: the default")
	got, err = lockStale(func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	assert.Equal(t, lockStaleAfter, got, "unset: the default")
	for _, v := range []string{"3s", "0", "-1m", "soon", "60"} {
		_, err := lockStale(env(v))
		assert.ErrorContains(t, err, LockStaleEnv+"=", v)
	}
}

// TestLockStaleAgeFromTheEnvironment: with a short stale age a lock that
// old is taken over, a younger one waited for, and the holder touches its
// own lock at half the age, so it never looks stale while the run lives.
func TestLockStaleAgeFromTheEnvironment(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	s.Options.LookupEnv = func(k string) (string, bool) {
		if k == LockStaleEnv {
			return "4s", true
		}
		return "", false
	}
	r := runners["c1"]
	ctx := context.Background()

	r.write(t, LockPath, "other-7")
	live := &AcquireLock{Wait: time.Second}
	require.NoError(t, prepare(ctx, live, s))
	assert.Equal(t, 4*time.Second, live.staleAfter())
	require.ErrorContains(t, live.Run(ctx), "the lock expires 4s after its last touch")

	old := time.Now().Add(-5 * time.Second)
	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	l := &AcquireLock{}
	require.NoError(t, prepare(ctx, l, s))
	assert.Equal(t, 6*time.Second, l.Wait, "the default wait outlasts a stale age and a touch")
	require.NoError(t, l.Run(ctx), "a lock older than the stale age is taken over")
	defer func() { require.NoError(t, l.Release(ctx)) }()
	assert.Equal(t, "me-1", r.read(t, LockPath))

	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	require.Eventually(t, func() bool {
		fi, err := os.Stat(r.path(LockPath))
		return err == nil && fi.ModTime().After(old.Add(time.Second))
	}, 3*time.Second, 100*time.Millisecond, "the holder touches its lock within half the stale age")
}
