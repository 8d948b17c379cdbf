package phase

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// recorder is a test phase that logs every call the manager makes.
type recorder struct {
	title   string
	calls   *[]string
	mode    DryRunMode
	should  bool
	runErr  error
	prepErr error
	planned []node.Change
	onRun   func()
}

func (r *recorder) Title() string { return r.title }
func (r *recorder) Run(context.Context) error {
	*r.calls = append(*r.calls, r.title+":run")
	if r.onRun != nil {
		r.onRun()
	}
	return r.runErr
}
func (r *recorder) Prepare(context.Context) error {
	*r.calls = append(*r.calls, r.title+":prepare")
	return r.prepErr
}
func (r *recorder) ShouldRun() bool {
	*r.calls = append(*r.calls, r.title+":should")
	return r.should
}
func (r *recorder) CleanUp(context.Context) { *r.calls = append(*r.calls, r.title+":cleanup") }
func (r *recorder) DryRunMode() DryRunMode  { return r.mode }
func (r *recorder) DryRun(context.Context) error {
	*r.calls = append(*r.calls, r.title+":dryrun")
	return nil
}
func (r *recorder) Plan(context.Context) ([]node.Change, error) {
	*r.calls = append(*r.calls, r.title+":plan")
	return r.planned, r.prepErr
}

func newTestState(dry bool) *node.Fleet {
	c := &v1alpha1.Cluster{}
	return node.New(c, &v1alpha1.Distro{}, node.Options{DryRun: dry}, slog.New(slog.DiscardHandler))
}

func TestManagerRunsInOrderAndSkips(t *testing.T) {
	var calls []string
	m := &Manager{State: newTestState(false), Phases: []Phase{
		&recorder{title: "a", calls: &calls, should: true},
		&recorder{title: "b", calls: &calls, should: false},
		&recorder{title: "c", calls: &calls, should: true},
	}}
	require.NoError(t, m.Run(context.Background()))
	assert.Equal(t, []string{"a:prepare", "a:should", "a:run", "b:prepare", "b:should", "c:prepare", "c:should", "c:run"}, calls)
	outcomes := []string{}
	for _, tm := range m.State.Report.Timings() {
		outcomes = append(outcomes, tm.Outcome)
	}
	assert.Equal(t, []string{"ran", "skipped", "ran"}, outcomes)
}

func TestManagerCleansUpInReverseOnFailure(t *testing.T) {
	var calls []string
	boom := errors.New("boom")
	m := &Manager{State: newTestState(false), Phases: []Phase{
		&recorder{title: "a", calls: &calls, should: true},
		&recorder{title: "b", calls: &calls, should: false},
		&recorder{title: "c", calls: &calls, should: true, runErr: boom},
		&recorder{title: "d", calls: &calls, should: true},
	}}
	err := m.Run(context.Background())
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), `phase "c"`)
	assert.Equal(t, []string{"a:prepare", "a:should", "a:run", "b:prepare", "b:should", "c:prepare", "c:should", "c:run", "c:cleanup", "a:cleanup"}, calls)
}

func TestManagerInterruptCleansUp(t *testing.T) {
	var calls []string
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{State: newTestState(false), Phases: []Phase{
		&recorder{title: "lock", calls: &calls, should: true, onRun: cancel},
		&recorder{title: "work", calls: &calls, should: true},
	}}
	err := m.Run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{"lock:prepare", "lock:should", "lock:run", "lock:cleanup"}, calls)
}

func TestManagerDryRun(t *testing.T) {
	var calls []string
	m := &Manager{State: newTestState(true), Phases: []Phase{
		&recorder{title: "read", calls: &calls, should: true, mode: ReadOnly},
		&recorder{title: "write", calls: &calls, should: true, mode: Reported, planned: []node.Change{{Host: "kc0", What: "write /etc/x"}}},
		&recorder{title: "done", calls: &calls, should: false, mode: Reported},
		&recorder{title: "later", calls: &calls, should: true, mode: Reported, prepErr: ErrUnassessed},
		&recorder{title: "bye", calls: &calls, should: true, mode: OwnDryRun},
	}}
	require.NoError(t, m.Run(context.Background()))
	for _, c := range calls {
		assert.NotEqual(t, "write:run", c, "a reported phase must not run in a dry run")
		assert.NotEqual(t, "later:run", c)
		assert.NotEqual(t, "bye:run", c)
	}
	assert.Contains(t, calls, "read:run")
	assert.Contains(t, calls, "write:plan")
	assert.Contains(t, calls, "bye:dryrun")
	changes := m.State.Report.Changes()
	require.Len(t, changes, 1)
	assert.Equal(t, "write", changes[0].Phase)
	var outcomes []string
	for _, tm := range m.State.Report.Timings() {
		outcomes = append(outcomes, tm.Outcome)
	}
	assert.Equal(t, []string{"ran", "reported", "skipped", "unassessed", "dry-run"}, outcomes)
	assert.Contains(t, m.State.Report.Summary(true), "would change")
}

// prepare binds p to s and prepares it, as the manager does.
func prepare(ctx context.Context, p Phase, s *node.Fleet) error {
	Bind(p, s)
	return p.(Preparer).Prepare(ctx)
}
