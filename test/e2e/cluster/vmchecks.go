package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/microvm"
)

// checkVMFleet makes the VM backend's own checks (test/fleet/microvm:
// TestImageRootBoot's and TestFleetLifecycle_Root's) on the suite's
// guests, just brought up, so CI boots two guests for both rather than
// five (issue 32). The image's read-only checks come first, before
// anything else has run on a guest; the worker's enforcement checks and
// its reboot come before the walk, whose dry run fingerprints every host
// afterwards, and the enforcement checks must leave no byte the walk
// would see.
func (w *world) checkVMFleet(ctx context.Context, t *testing.T, p *microvm.Provider, f *fleet.Fleet) {
	t.Helper()
	start := time.Now()
	step := func(what string, check func()) {
		t.Helper()
		s := time.Now()
		check()
		t.Logf("the VM backend's checks: %s in %s", what, fleet.Since(s))
	}
	worker := f.Role(fleet.RoleWorker)[0].Name
	step("the image on every guest", func() { microvm.CheckFleetImage(ctx, t, f) })
	step("the fleet", func() { microvm.CheckFleetUp(ctx, t, p, f) })
	step("the policies on "+worker, func() {
		in := e2eutil.NewInspector(t, w.views.All.Spec.Hosts, w.knownHosts)
		before := in.Fingerprint(t, worker)
		// No labelling probe: Test_11 and Test_25 label the engine's
		// binary with semanage and restorecon here and assert it
		// (assertSELinuxPolicy, assertEngineLabelled).
		microvm.CheckFleetEnforces(ctx, t, f, worker, false)
		e2eutil.SameFingerprint(t, worker, before, in.Fingerprint(t, worker), "the enforcement checks left a change")
		in.Forget(worker) // the reboot ends its connection
	})
	step("a reboot of "+worker, func() { microvm.CheckReboot(ctx, t, p, f, worker) })
	t.Logf("the VM backend's checks on fleet %s took %s", f.Name, fleet.Since(start))
}
