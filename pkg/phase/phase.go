// Package phase holds apply's phases, one per file, numbered in run order,
// and the manager that walks them. A phase is a small type with Title and
// Run; everything else it can do is an optional interface the manager finds
// by type assertion (the shape of k0sctl's phase package).
package phase

import (
	"context"
	"errors"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// Phase is one step of a run.
type Phase interface {
	Title() string
	Run(ctx context.Context) error
}

// Preparer reads what a phase needs (which hosts, what state) right before
// it is considered, so it sees facts gathered by earlier phases. It must
// only read: a dry run calls it.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// base is embedded by every phase: it holds the run the manager binds the
// phase to before preparing it, so no phase stores it by hand.
type base struct {
	state *node.Fleet
}

func (b *base) bind(s *node.Fleet) { b.state = s }

// binder is a phase embedding base.
type binder interface {
	bind(s *node.Fleet)
}

// Bind hands a phase the run it works on; the manager does it before each
// phase, and tests that drive one phase by hand call it first.
func Bind(p Phase, s *node.Fleet) {
	if b, ok := p.(binder); ok {
		b.bind(s)
	}
}

// Conditional says whether the phase has anything to do. It only reads.
type Conditional interface {
	ShouldRun() bool
}

// CleanUpper undoes or releases what a phase holds when the run fails after
// the phase ran (the lock, for one).
type CleanUpper interface {
	CleanUp(ctx context.Context)
}

// DryRunMode is what a dry run does with a phase (docs/apply.md, Dry run).
type DryRunMode int

const (
	// Reported phases are listed with the hosts and work they would touch,
	// and never run. A phase that declares nothing is reported.
	Reported DryRunMode = iota
	// ReadOnly phases run for real: they only read, and later phases need
	// what they find (connection, OS, facts, versions).
	ReadOnly
	// OwnDryRun phases run their DryRun method instead of Run.
	OwnDryRun
)

func (m DryRunMode) String() string {
	switch m {
	case ReadOnly:
		return "runs, reads only"
	case OwnDryRun:
		return "runs its own dry-run path"
	}
	return "reported, not run"
}

// DryRunDeclarer declares a phase's dry-run mode.
type DryRunDeclarer interface {
	DryRunMode() DryRunMode
}

// DryRunner is the phase's own dry-run path (OwnDryRun).
type DryRunner interface {
	DryRun(ctx context.Context) error
}

// Planner lists, without changing anything, the work a reported phase would
// do on each host, with work already done filtered out.
type Planner interface {
	Plan(ctx context.Context) ([]node.Change, error)
}

// ErrUnassessed is returned by Prepare or Plan in a dry run when the phase
// reads state an earlier reported phase would have created.
var ErrUnassessed = errors.New("unassessed: depends on work an earlier phase would do")

// modeOf returns the declared dry-run mode, Reported by default.
func modeOf(p Phase) DryRunMode {
	if d, ok := p.(DryRunDeclarer); ok {
		return d.DryRunMode()
	}
	return Reported
}

// readOnly and ownDryRun are embedded by phases to declare their mode.
type readOnly struct{}

func (readOnly) DryRunMode() DryRunMode { return ReadOnly }

type ownDryRun struct{}

func (ownDryRun) DryRunMode() DryRunMode { return OwnDryRun }
