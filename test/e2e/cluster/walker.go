package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// walker steps one phase list over one loaded run, one phase at a time.
type walker struct {
	loaded *action.Loaded
	mgr    *phase.Manager
	next   int
	ran    int // phases stepped, not passed
	failed string
}

// runOptions are the options the suite runs cargoship with: the CLI's,
// with both update switches on and a concurrency above any fleet's size,
// so every host is worked on in one batch.
func (w *world) runOptions(pkgPath, inventory string, dry bool) action.Options {
	return action.Options{
		PackagePath: pkgPath,
		ClusterPath: inventory,
		TmpDir:      os.TempDir(),
		Log:         w.log,
		Phase: node.Options{
			DryRun: dry, UpdateHosts: true, UpdateFirewall: true,
			Concurrency: 300, UploadConcurrency: 300,
			Timeout:        30 * time.Minute,
			KnownHostsPath: w.knownHosts,
			InstanceID:     fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano()),
			LookupEnv:      os.LookupEnv,
			KubeconfigOut:  w.kubeconfig,
			LabelNodes:     true,
			NoFanout:       w.noFanout,
		},
	}
}

// phases is what a whole run walks: apply's list, or its staging half in a
// stage-only run, which starts no engine and so must not ask for one.
func (w *world) phases() []phase.Phase {
	if w.stage {
		return action.StagePhases()
	}
	return action.ApplyPhases()
}

// newWalker loads a run the way the CLI does.
func newWalker(t *testing.T, o action.Options, phases []phase.Phase) *walker {
	t.Helper()
	l, err := action.Load(context.Background(), o)
	if err != nil {
		t.Fatalf("loading the run: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return &walker{loaded: l, mgr: &phase.Manager{Phases: phases, State: l.State}}
}

// step runs the next phase, which must have the given title: the suite
// pins the order docs/apply.md lists.
func (wk *walker) step(t *testing.T, title string) string {
	t.Helper()
	if wk.failed != "" {
		t.Fatalf("not run: %s failed earlier", wk.failed)
	}
	if wk.next >= len(wk.mgr.Phases) {
		t.Fatalf("the phase list ended before %q", title)
	}
	p := wk.mgr.Phases[wk.next]
	if p.Title() != title {
		wk.failed = title
		t.Fatalf("phase %d is %q, want %q", wk.next+1, p.Title(), title)
	}
	wk.next++
	wk.ran++
	outcome, err := wk.mgr.Step(context.Background(), p)
	if err != nil {
		wk.failed = title
		wk.mgr.CleanUpAll()
		t.Fatal(err)
	}
	return outcome
}

// pass steps over the next phase without running it (a phase a
// stage-only run stands down), keeping the order pinned.
func (wk *walker) pass(t *testing.T, title string) {
	t.Helper()
	if wk.next >= len(wk.mgr.Phases) || wk.mgr.Phases[wk.next].Title() != title {
		t.Fatalf("phase %d is not %q", wk.next+1, title)
	}
	wk.next++
}

// upcoming is the next phase, which must have the given title.
func (wk *walker) upcoming(t *testing.T, title string) phase.Phase {
	t.Helper()
	if wk.next >= len(wk.mgr.Phases) || wk.mgr.Phases[wk.next].Title() != title {
		t.Fatalf("phase %d is not %q", wk.next+1, title)
	}
	return wk.mgr.Phases[wk.next]
}

// inStageHalf says the next phase, titled title, is one a stage-only run
// walks: phase.InStageHalf, the predicate action.StagePhases is built by.
func (wk *walker) inStageHalf(t *testing.T, title string) bool {
	t.Helper()
	return phase.InStageHalf(wk.upcoming(t, title))
}

// classOf names the next phase's class, for the skip message.
func (wk *walker) classOf(t *testing.T, title string) string {
	t.Helper()
	c, ok := phase.ClassOf(wk.upcoming(t, title))
	if !ok {
		return "none declared"
	}
	return c.String()
}

// state is the run's shared state.
func (wk *walker) state() *node.Fleet { return wk.loaded.State }
