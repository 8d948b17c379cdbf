package phase

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// staleLock plants a lock holding holder, two minutes old, and returns its
// path.
func staleLock(t *testing.T, holder string) string {
	t.Helper()
	lock := filepath.Join(t.TempDir(), "run", "cargoship.lock")
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o700))
	require.NoError(t, os.WriteFile(lock, []byte(holder), 0o600))
	old := time.Now().Add(-2 * time.Minute)
	require.NoError(t, os.Chtimes(lock, old, old))
	return lock
}

// takeover runs lockTakeoverScript as run id would, on the lock it read
// as holding read, with a stale age of 60 s.
func takeover(lock, id, read string, env ...string) (string, error) {
	sum := sha256.Sum256([]byte(read))
	cmd := exec.Command("/bin/sh", "-c", host.Script(lockTakeoverScript, lock, id, hex.EncodeToString(sum[:]), "60"))
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.String(), err
	}
	return strings.TrimSpace(string(out)), nil
}

// TestLockTakeoverScriptHasOneWinner: runs that all read the same stale
// lock take it over at once, on this machine's shell; one takes it, every
// other finds it changed, and the lock holds the one's id.
func TestLockTakeoverScriptHasOneWinner(t *testing.T) {
	testtier.Root(t, "the lock's directory must be root's")
	for round := range 5 {
		lock := staleLock(t, "dead-1")
		const n = 8
		outs := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				out, err := takeover(lock, "run-"+string(rune('a'+i)), "dead-1")
				if err != nil {
					out = "error: " + out
				}
				outs[i] = out
			})
		}
		wg.Wait()
		var winner string
		for i, out := range outs {
			switch out {
			case "taken":
				assert.Empty(t, winner, "round %d: a second run took the lock", round)
				winner = "run-" + string(rune('a'+i))
			case "changed":
			default:
				t.Errorf("round %d: run %d: %q", round, i, out)
			}
		}
		require.NotEmpty(t, winner, "round %d: one run takes the lock: %q", round, outs)
		b, err := os.ReadFile(lock)
		require.NoError(t, err)
		assert.Equal(t, winner, string(b), "round %d", round)
		left, err := filepath.Glob(filepath.Join(filepath.Dir(lock), ".takeover.*"))
		require.NoError(t, err)
		assert.Empty(t, left, "no temporary file is left")
	}
}

// TestLockTakeoverScriptLeavesALockThatCameBack: a lock touched since it
// was read (its holder came back), or holding something else by now, is
// not taken.
func TestLockTakeoverScriptLeavesALockThatCameBack(t *testing.T) {
	testtier.Root(t, "the lock's directory must be root's")
	lock := staleLock(t, "dead-1")
	now := time.Now()
	require.NoError(t, os.Chtimes(lock, now, now))
	out, err := takeover(lock, "me-1", "dead-1")
	require.NoError(t, err, out)
	assert.Equal(t, "changed", out)
	b, err := os.ReadFile(lock)
	require.NoError(t, err)
	assert.Equal(t, "dead-1", string(b), "a live holder's lock stays")

	lock = staleLock(t, "other-2")
	out, err = takeover(lock, "me-1", "dead-1")
	require.NoError(t, err, out)
	assert.Equal(t, "changed", out, "not the lock that was read")

	require.NoError(t, os.Remove(lock))
	out, err = takeover(lock, "me-1", "dead-1")
	require.NoError(t, err, out)
	assert.Equal(t, "absent", out)
	_, err = os.Stat(lock)
	require.ErrorIs(t, err, os.ErrNotExist, "a lock gone is not made by the takeover: the create does that")
}

// TestLockTakeoverScriptNeedsFlock: on a host without flock(1) a stale
// lock is not taken over, and the error says what to do.
func TestLockTakeoverScriptNeedsFlock(t *testing.T) {
	testtier.Root(t, "the lock's directory must be root's")
	bin := t.TempDir()
	for _, tool := range []string{"sh", "dirname", "mkdir", "stat", "chown", "chmod", "head", "sha256sum", "date", "rm", "mktemp", "mv"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	lock := staleLock(t, "dead-1")
	out, err := takeover(lock, "me-1", "dead-1", "PATH="+bin)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, out)
	assert.Equal(t, lockNoFlock, ee.ExitCode())
	assert.Contains(t, out, "no flock(1)")
	assert.Contains(t, out, "remove "+lock)
	b, err := os.ReadFile(lock)
	require.NoError(t, err)
	assert.Equal(t, "dead-1", string(b))
}
