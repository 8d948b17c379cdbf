package cluster

import (
	"testing"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// steps times every subtest the suite runs through run; TestMain lists the
// slowest at the end (docs/e2e.md, What a run does).
var steps e2eutil.Steps

// slowestShown is how many of the slowest steps a run names.
const slowestShown = 10

// run is t.Run with the subtest timed for the slowest-steps summary.
func run(t *testing.T, name string, fn func(t *testing.T)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		steps.Track(t)
		fn(t)
	})
}
