package e2eutil

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// RunWhole runs a whole apply (or any phase list) the way the CLI does,
// fails t when it fails, logs its summary and returns its report.
func RunWhole(t testing.TB, o action.Options, phases []phase.Phase) *node.Report {
	t.Helper()
	rep, err := Run(t, o, phases)
	require.NoError(t, err)
	return rep
}

// Run is RunWhole for a run that may fail: it returns the run's error
// with the report of what it did before.
func Run(t testing.TB, o action.Options, phases []phase.Phase) (*node.Report, error) {
	t.Helper()
	l, err := action.Load(context.Background(), o)
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	err = action.Run(context.Background(), l, phases)
	t.Log("\n" + l.State.Report.Summary(o.Phase.DryRun))
	return l.State.Report, err
}

// AssertConverged is the convergence check (docs/e2e.md, What a run does):
// a dry run lists no work, a second apply changes nothing and uploads 0
// bytes, and no host's fingerprint moves. run makes a whole run, dry or
// not, of the inventory the hosts are in.
func AssertConverged(t testing.TB, in *Inspector, hosts []string, run func(dry bool) *node.Report) {
	t.Helper()
	before := map[string]string{}
	for _, h := range hosts {
		before[h] = in.Fingerprint(t, h)
	}
	dry := run(true)
	assert.Empty(t, dry.Changes(), "a dry run on a converged fleet lists no work")
	again := run(false)
	assert.Empty(t, again.Changes(), "a second apply changes nothing")
	assert.Zero(t, again.BytesUploaded(), "a second apply uploads nothing")
	for _, h := range hosts {
		SameFingerprint(t, h, before[h], in.Fingerprint(t, h), "a converged re-run changed a byte")
	}
}

// TestLogger logs through the test log.
func TestLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// testWriter sends log lines to the test log.
type testWriter struct{ t testing.TB }

func (tw testWriter) Write(p []byte) (int, error) {
	tw.t.Helper()
	tw.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
