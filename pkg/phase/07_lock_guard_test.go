package phase

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// TestLockCutOffRunChecksBeforeItsNextCommand: a run whose refresh has
// not found its lock for longer than the refresh allows (it was cut off,
// or stopped) checks the lock itself before its next command: still its
// own, the command goes and the lock is touched; taken meanwhile, the
// command is refused at once, without waiting for the refresh.
func TestLockCutOffRunChecksBeforeItsNextCommand(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	ctx := context.Background()
	l := &AcquireLock{} // the refresh ticks every 30 s: not in this test
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))
	conn := s.Hosts[0].Conn
	k := guardOf(conn)
	require.NotNil(t, k, "a held host's commands go through the guard")

	_, err := conn.Sudo(ctx, "true")
	require.NoError(t, err)
	old := time.Now().Add(-2 * time.Minute)
	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	_, err = conn.Sudo(ctx, "true")
	require.NoError(t, err)
	fi, err := os.Stat(r.path(LockPath))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(old), "a command inside the refresh's time does not check the lock")

	k.confirm(time.Now().Add(-2 * time.Minute)) // cut off for two minutes
	_, err = conn.Sudo(ctx, "true")
	require.NoError(t, err, "the lock is still ours")
	fi, err = os.Stat(r.path(LockPath))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().After(old), "the check touched it")

	k.confirm(time.Now().Add(-2 * time.Minute))
	r.write(t, LockPath, "other-9")
	_, err = conn.Sudo(ctx, "true")
	var lost *LockLostError
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, "c1", lost.Host)
	require.ErrorContains(t, err, "another cargoship (other-9) holds "+LockPath+" now")
	require.ErrorContains(t, l.Release(ctx), "this run's lock on c1 was lost")
	assert.Equal(t, "other-9", r.read(t, LockPath))
}

// TestLockRemovedStopsTheRun: a lock removed under the run (by hand, or a
// boot emptying /run) is lost as well, and an SFTP session is refused
// like a command.
func TestLockRemovedStopsTheRun(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	ctx := context.Background()
	l := &AcquireLock{}
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))
	require.NoError(t, os.Remove(r.path(LockPath)))

	k := guardOf(s.Hosts[0].Conn)
	require.NotNil(t, k)
	k.confirm(time.Now().Add(-2 * time.Minute))
	_, err := s.Hosts[0].Conn.Run(ctx, "true")
	require.ErrorContains(t, err, "this run's lock on c1 was lost: "+LockPath+" is gone")

	opener, ok := guardConn(l, &lockHold{h: k.h, conn: sftpRunner{k.conn}}).(host.SFTPOpener)
	require.True(t, ok, "the guard offers SFTP where its connection does")
	_, err = opener.OpenSFTP(ctx)
	require.ErrorContains(t, err, LockPath+" is gone", "no session is opened")
	require.ErrorContains(t, l.Release(ctx), "was lost")
	_, err = s.Hosts[0].Conn.Run(ctx, "true")
	require.NoError(t, err, "released, the connection is the run's own again")
}

// sftpRunner is a runner that would open SFTP sessions.
type sftpRunner struct{ host.Runner }

func (sftpRunner) OpenSFTP(context.Context) (*host.SFTP, error) {
	return nil, errors.New("opened a session")
}

// TestLockLostStopsAPollAtOnce: a phase that polls a host until it
// answers (a node's readiness, for minutes) stops at the first refusal.
func TestLockLostStopsAPollAtOnce(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	ctx := context.Background()
	l := &AcquireLock{}
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))
	defer func() { _ = l.Release(ctx) }()
	runners["c1"].write(t, LockPath, "other-9")
	guardOf(s.Hosts[0].Conn).confirm(time.Now().Add(-2 * time.Minute))

	polls := 0
	err := retry.Do(ctx, retry.Policy{Wait: 10 * time.Millisecond, Timeout: 5 * time.Second}, func(ctx context.Context) error {
		polls++
		_, err := s.Hosts[0].Conn.Sudo(ctx, "true")
		return err
	})
	var lost *LockLostError
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, 1, polls, "no second poll")
}

// TestLockUnconfirmedRefusesTheCommand: when the late check cannot reach
// the lock at all, the command is refused too: the lock may be another
// run's by now.
func TestLockUnconfirmedRefusesTheCommand(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	ctx := context.Background()
	l := &AcquireLock{}
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))
	defer func() { require.NoError(t, l.Release(ctx)) }()
	runners["c1"].Fail("touch -c", 255, "connection lost")
	k := guardOf(s.Hosts[0].Conn)
	k.confirm(time.Now().Add(-2 * time.Minute))
	_, err := s.Hosts[0].Conn.Sudo(ctx, "true")
	require.ErrorContains(t, err, "was last found this run's 2m0s ago and cannot be confirmed now")
	require.ErrorContains(t, err, "connection lost")
	assert.NotContains(t, runners["c1"].Commands(), "true", "the command was not sent")
}
