package node

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSummaryAfterAFailure is issue 11a: a dry run that failed to connect
// printed "nothing would change", a claim about phases that never ran.
func TestSummaryAfterAFailure(t *testing.T) {
	connectFailed := func() *Report {
		r := &Report{}
		r.AddTiming(PhaseTiming{Title: "Connect to hosts", Outcome: "failed"})
		return r
	}
	err := errors.New(`phase "Connect to hosts": connect: dial tcp 127.0.0.1:1: connection refused`)

	r := connectFailed()
	r.Fail(err)
	dry := r.Summary(true)
	assert.Contains(t, dry, "failed: "+err.Error())
	assert.Contains(t, dry, "dry run incomplete")
	assert.NotContains(t, dry, "nothing would change")
	assert.NotContains(t, dry, "every host is already")

	realRun := r.Summary(false)
	assert.Contains(t, realRun, "nothing changed before the failure")
	assert.NotContains(t, realRun, "every host is already", "a failed run does not vouch for the hosts")
	assert.NotContains(t, realRun, "dry run incomplete")

	// The manager's timings say so even when Fail was not called.
	assert.Contains(t, connectFailed().Summary(true), `failed: phase "Connect to hosts" failed`)
	assert.Contains(t, connectFailed().Summary(true), "dry run incomplete")

	// What was found before the failure is listed as such.
	r = &Report{}
	r.Add(Change{Host: "kc0", Phase: "Prepare hosts", What: "write /etc/sysctl.d/90-cargoship.conf"})
	r.Fail(errors.New(`phase "Updating hosts firewall": plan: no front end`))
	dry = r.Summary(true)
	assert.Contains(t, dry, "would change before the failure:\n  kc0\n    [Prepare hosts] write")
	assert.Contains(t, dry, "dry run incomplete")
}

func TestSummaryWithoutAFailure(t *testing.T) {
	r := &Report{}
	r.AddTiming(PhaseTiming{Title: "Connect to hosts", Outcome: "ran"})
	assert.Contains(t, r.Summary(true), "nothing would change: every host is already as the package and inventory describe")
	assert.NotContains(t, r.Summary(true), "incomplete")
	r.Nothing = "no target holds anything"
	assert.Contains(t, r.Summary(false), "nothing changed: no target holds anything")
}
