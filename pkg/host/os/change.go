package hostos

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Change is what a step did (Apply) or would do (Plan) on one host.
type Change struct {
	// Actions are one line each; none means nothing to do.
	Actions []string
	// Failed are items the host refused without failing the step: a
	// sysctl key a container cannot set, a module that cannot be loaded.
	Failed []Failure
	// Warnings are things an operator should know that change nothing.
	Warnings []string
}

// Failure is one item a step could not apply and why.
type Failure struct {
	Item   string
	Reason string
}

// String is "item: reason".
func (f Failure) String() string { return f.Item + ": " + f.Reason }

// Changed reports whether the step changed, or would change, anything.
func (c Change) Changed() bool { return len(c.Actions) > 0 }

func (c *Change) actionf(format string, args ...any) {
	c.Actions = append(c.Actions, fmt.Sprintf(format, args...))
}

func (c *Change) warnf(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// Step is one host preparation. Plan only reads; Apply converges the host
// and on a host already converged changes nothing and returns no actions.
type Step interface {
	Plan(ctx context.Context, r host.Runner) (Change, error)
	Apply(ctx context.Context, r host.Runner) (Change, error)
}
