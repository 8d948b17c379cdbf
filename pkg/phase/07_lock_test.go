package phase

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

func TestAcquireLockWaitsOutALiveHolderAndTakesOverAStaleOne(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	ctx := context.Background()

	r.write(t, LockPath, "other-7")
	live := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, live, s))
	err := live.Run(ctx)
	require.ErrorContains(t, err, "another cargoship (other-7) holds "+LockPath)
	assert.Equal(t, "other-7", r.read(t, LockPath), "a live holder's lock is left alone")

	old := time.Now().Add(-2 * lockStaleAfter)
	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	stale := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, stale, s))
	require.NoError(t, stale.Run(ctx))
	assert.Equal(t, "me-1", r.read(t, LockPath), "a stale lock is taken over")

	require.NoError(t, stale.Release(ctx))
	_, err = os.Stat(r.path(LockPath))
	require.ErrorIs(t, err, os.ErrNotExist, "releasing removes our lock")

	again := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, again, s))
	require.NoError(t, again.Run(ctx))
	r.write(t, LockPath, "other-7") // taken over while we held it
	require.NoError(t, again.Release(ctx))
	assert.Equal(t, "other-7", r.read(t, LockPath), "releasing never removes another run's lock")
}

func TestLockDirIsRootsAlone(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	ctx := context.Background()

	l := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, l, s))
	require.NoError(t, l.Run(ctx))
	assertMode(t, r.path(LockDir), os.ModeDir|0o700, 0)
	assertMode(t, r.path(LockPath), 0o600, 0)
	require.NoError(t, l.Release(ctx))

	// made by another user and opened up: handed back to root, 0700
	require.NoError(t, os.Chmod(r.path(LockDir), 0o777))
	require.NoError(t, os.Chown(r.path(LockDir), 12345, 12345))
	require.NoError(t, l.Run(ctx))
	assertMode(t, r.path(LockDir), os.ModeDir|0o700, 0)
	require.NoError(t, l.Release(ctx))
}

func assertMode(t *testing.T, p string, mode os.FileMode, uid uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	assert.Equal(t, mode, fi.Mode(), "%s: mode", p)
	assert.Equal(t, uid, fi.Sys().(*syscall.Stat_t).Uid, "%s: owner", p)
}

// secretFile is a file a hostile lock points at.
func secretFile(t *testing.T) (string, string) {
	p := filepath.Join(t.TempDir(), "shadow")
	content := "root:$6$s3cr3t-hash$abc:19000:0:99999:7:::\n"
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p, content
}

func TestLockNeverFollowsALink(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	ctx := context.Background()
	t.Run("lock file", func(t *testing.T) {
		s, runners := k3sTestState(t)
		s.Options.InstanceID = "me-1"
		r := runners["c1"]
		secret, content := secretFile(t)
		require.NoError(t, os.MkdirAll(r.path(LockDir), 0o700))
		require.NoError(t, os.Symlink(secret, r.path(LockPath)))

		l := &AcquireLock{Wait: 3 * time.Second}
		require.NoError(t, prepare(ctx, l, s))
		err := l.Run(ctx)
		require.ErrorContains(t, err, LockPath+" is a symbolic link or not a regular file")
		assert.NotContains(t, err.Error(), "s3cr3t")
		b, rerr := os.ReadFile(secret)
		require.NoError(t, rerr)
		assert.Equal(t, content, string(b), "the link's target is untouched")

		_, err = l.Plan(ctx)
		require.NoError(t, err)
		assert.NotContains(t, strings.Join(s.Report.Notes(), "\n"), "s3cr3t", "a dry run never reads through the link")
	})
	t.Run("lock directory", func(t *testing.T) {
		s, runners := k3sTestState(t)
		s.Options.InstanceID = "me-1"
		r := runners["c1"]
		elsewhere := t.TempDir()
		before, err := os.Stat(elsewhere)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(r.path(LockDir)), 0o755))
		require.NoError(t, os.Symlink(elsewhere, r.path(LockDir)))

		l := &AcquireLock{Wait: 3 * time.Second}
		require.NoError(t, prepare(ctx, l, s))
		require.ErrorContains(t, l.Run(ctx), LockDir+" is a symbolic link or not a directory")
		entries, err := os.ReadDir(elsewhere)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing is created through the link")
		assertMode(t, elsewhere, before.Mode(), 0) // not chmodded through the link
	})
}

func TestLockHolderIsShownOnlyAsARunID(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	var log bytes.Buffer
	s.Log = slog.New(slog.NewTextHandler(&log, nil))
	r := runners["c1"]
	ctx := context.Background()
	_, content := secretFile(t)
	r.write(t, LockPath, content)

	live := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, live, s))
	err := live.Run(ctx)
	require.ErrorContains(t, err, "another cargoship ("+unreadableHolder+") holds "+LockPath)
	assert.NotContains(t, err.Error(), "s3cr3t")
	_, err = live.Plan(ctx)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(s.Report.Notes(), "\n"), unreadableHolder)

	old := time.Now().Add(-2 * lockStaleAfter)
	require.NoError(t, os.Chtimes(r.path(LockPath), old, old))
	stale := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(ctx, stale, s))
	require.NoError(t, stale.Run(ctx), "a stale lock is taken over whatever it holds")
	require.NoError(t, stale.Release(ctx))
	assert.Contains(t, log.String(), unreadableHolder)
	assert.NotContains(t, log.String()+strings.Join(s.Report.Notes(), "\n"), "s3cr3t")

	s.Options.InstanceID = "me;1"
	require.ErrorContains(t, prepare(ctx, &AcquireLock{}, s), "is not letters, digits")
}

// A --lock-wait or a stale age at or under the usual 5 s pause still
// polls more than once.
func TestLockPollEvery(t *testing.T) {
	assert.Equal(t, lockRetryEvery, lockPollEvery(90*time.Second, lockStaleAfter))
	assert.Equal(t, time.Second, lockPollEvery(4*time.Second, lockStaleAfter))
	assert.Equal(t, 250*time.Millisecond, lockPollEvery(time.Second, lockStaleAfter))
	assert.Less(t, lockPollEvery(5*time.Second, lockStaleAfter), 5*time.Second)
	assert.Equal(t, 2*time.Second, lockPollEvery(90*time.Second, 8*time.Second))
}

// TestLockReadOfALockReleasedMidRead: a holder that releases its lock
// between the read's test and its read leaves it absent, not an error (a
// head that removes the file first stands in for the race).
func TestLockReadOfALockReleasedMidRead(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "run", "cargoship.lock")
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o700))
	require.NoError(t, os.WriteFile(lock, []byte("vm-1"), 0o600))
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	realHead, err := exec.LookPath("head")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "head"), []byte("#!/bin/sh\nfor a; do f=$a; done\nrm -f -- \"$f\"\nexec "+realHead+" \"$@\"\n"), 0o755))
	cmd := exec.Command("/bin/sh", "-c", host.Script(lockReadScript, lock))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "absent\n", string(out))
}

// TestLockWaitRunningOutMidReadNamesTheHolder: the lock wait can end
// while the lock is being read again (a loaded host answers late); the
// error still names the holder the earlier read found, not the killed
// read's exit.
func TestLockWaitRunningOutMidReadNamesTheHolder(t *testing.T) {
	testtier.Root(t, "the lock takes only a directory and file root owns, and the test hosts are this machine's file system")
	s, runners := k3sTestState(t)
	s.Options.InstanceID = "me-1"
	r := runners["c1"]
	r.write(t, LockPath, "other-7")
	reads := 0
	r.Handle("stat -c %Y", func(hosttest.Call) (string, error) {
		reads++
		if reads == 1 {
			return "5\nother-7", nil
		}
		time.Sleep(3500 * time.Millisecond) // past the wait, as a killed read
		return "", &host.ExitError{Code: -1}
	})
	// 3 s, not 1: on two cores loaded 20 deep the first read alone took
	// most of a second, and the wait ran out before a second read began.
	l := &AcquireLock{Wait: 3 * time.Second}
	require.NoError(t, prepare(context.Background(), l, s))
	err := l.Run(context.Background())
	require.GreaterOrEqual(t, reads, 2, "the lock was read again before the wait ran out")
	require.ErrorContains(t, err, "another cargoship (other-7) holds "+LockPath)
}
