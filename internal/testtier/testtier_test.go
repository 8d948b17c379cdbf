package testtier

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlowOnReadsABooleanAndRefusesAnythingElse(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true} {
		on, err := slowOn(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, on, v)
	}
	_, err := slowOn("yes")
	require.Error(t, err)
	assert.Contains(t, err.Error(), SlowEnv)
}

// The gates skip a normal user and let root through; the message names the
// tier, the reason and a command that runs the test.
func TestGatesSkipANormalUserAndNameTheCommand(t *testing.T) {
	root := os.Geteuid() == 0
	t.Setenv(SlowEnv, "")
	var msgs []string
	for name, gate := range map[string]func(testing.TB, string){"root": Root, "slow": Slow} {
		var ran bool
		rec := &recorder{TB: t}
		func() {
			defer func() {
				if r := recover(); r != nil && r != skipped {
					panic(r)
				}
			}()
			gate(rec, "the reason")
			ran = true
		}()
		assert.Equal(t, root, ran, "%s gate: runs exactly when root", name)
		assert.Equal(t, !root, rec.msg != "", "%s gate: skips exactly when not root", name)
		msgs = append(msgs, rec.msg)
	}
	if root {
		return
	}
	for _, m := range msgs {
		assert.Contains(t, m, "the reason")
		assert.Contains(t, m, "go test -count=1 -run '^TestGatesSkipANormalUserAndNameTheCommand$' ./internal/testtier/")
		assert.Contains(t, m, "./hack/test.sh")
	}
	assert.True(t, strings.HasPrefix(msgs[0], "root tier:") || strings.HasPrefix(msgs[1], "root tier:"))
	assert.True(t, strings.HasPrefix(msgs[0], "slow tier:") || strings.HasPrefix(msgs[1], "slow tier:"))
}

func TestSlowRunsANormalUserWhoOptsIn(t *testing.T) {
	t.Setenv(SlowEnv, "1")
	rec := &recorder{TB: t}
	Slow(rec, "the reason")
	assert.Empty(t, rec.msg, "not skipped")
}

// skipped is what recorder's Skipf panics with, so a gate returns at once
// as it does after testing's SkipNow.
var skipped = new(int)

// recorder is a testing.TB whose Skipf records the message instead of
// skipping the test running it.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Skipf(format string, args ...any) {
	r.msg = strings.TrimSpace(fmt.Sprintf(format, args...))
	panic(skipped)
}

func (r *recorder) Helper() {}
