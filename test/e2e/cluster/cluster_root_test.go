package cluster

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// TestClusterPhases runs the walks docs/e2e.md lists in one process:
// apply, then a converged re-run, a reboot (on a backend whose hosts
// reboot: the VM fleet), then labels, join, upgrade and reset. The walks
// after apply start from the cluster the apply walk installed.
func TestClusterPhases(t *testing.T) {
	w := provision(t)
	pkg := suitePackage(t, w, false)
	in := newInspector(t, w)
	w.prepareFirewalls(t, in)

	run(t, "bad-input", func(t *testing.T) { badInput(t, w, in, pkg) })

	// fresh is every host before cargoship touched it, the join host
	// included: the whole reset at the end must leave each one like this.
	fresh := map[string]string{}
	run(t, "dry-run-fresh", func(t *testing.T) {
		for _, h := range w.views.All.Spec.Hosts {
			fresh[h.Hostname] = in.fingerprint(t, h.Hostname)
		}
		rep := runWhole(t, w, pkg.Path, w.applyPath, true)
		assert.NotEmpty(t, rep.Changes(), "a dry run on a fresh fleet lists the work")
		for _, h := range w.views.All.Spec.Hosts {
			sameFingerprint(t, h.Hostname, fresh[h.Hostname], in.fingerprint(t, h.Hostname), "a dry run changed a byte")
		}
	})

	applied := run(t, "apply", func(t *testing.T) { applyWalk(t, w, in, pkg) })

	run(t, "converged", func(t *testing.T) {
		if !applied {
			t.Fatal("the apply walk failed: nothing converged to check")
		}
		var hosts []string
		for _, h := range w.views.Apply.Spec.Hosts {
			hosts = append(hosts, h.Hostname)
		}
		e2eutil.AssertConverged(t, in.Inspector, hosts, func(dry bool) *node.Report {
			return runWhole(t, w, pkg.Path, w.applyPath, dry).r
		})
	})

	run(t, "reboot", func(t *testing.T) {
		if !applied {
			t.Fatal("the apply walk failed: nothing was set to survive a reboot")
		}
		rebootWalk(t, w, in, pkg)
	})

	run(t, "labels", func(t *testing.T) {
		if w.stage {
			t.Skipf("%s is set: the labels walk needs a running engine", envStageOnly)
		}
		if !applied {
			t.Fatal("the apply walk failed: there is no cluster to label")
		}
		labelsWalk(t, w, in, pkg)
	})

	run(t, "join", func(t *testing.T) {
		switch {
		case w.stage:
			t.Skipf("%s is set: the join walk installs an engine, and a stage-only run starts none", envStageOnly)
		case w.views.Join == "":
			t.Skipf("%s is unset: every host of the document is in the cluster, so there is nothing to join", envJoinHost)
		}
		if !applied {
			t.Fatal("the apply walk failed: there is no cluster to join")
		}
		joinWalk(t, w, in, pkg)
	})
	// running is the package the cluster runs: the reset walk removes its
	// files and joins again with it. The newer package outlives the
	// upgrade subtest, so it is built here.
	running := pkg
	up, upErr := upgradeEnabled()
	if upErr == nil && w.userPkg != "" {
		// A user's package has no newer one unless they bring it; naming
		// one is asking for the walk.
		switch {
		case w.userUpgrade != "":
			up = true
		case up:
			upErr = fmt.Errorf("%s with %s needs %s, the package to upgrade to", envUpgrade, envPackage, envUpgradePackage)
		}
	}
	var newer *testPackage
	if upErr == nil && up && !w.stage && applied {
		newer = suitePackage(t, w, true)
	}
	run(t, "upgrade", func(t *testing.T) {
		require.NoError(t, upErr)
		switch {
		case w.stage:
			t.Skipf("%s is set: a stage-only run has nothing to upgrade", envStageOnly)
		case !up:
			t.Skipf("%s is unset: the upgrade walk is opt-in", envUpgrade)
		}
		if !applied {
			t.Fatal("the apply walk failed: there is no cluster to upgrade")
		}
		upgradeWalk(t, w, in, newer)
		running = newer
	})
	run(t, "reset", func(t *testing.T) {
		if w.stage {
			t.Skipf("%s is set: a stage-only run installs no engine to take off", envStageOnly)
		}
		if !applied {
			t.Fatal("the apply walk failed: there is no cluster to reset")
		}
		resetWalk(t, w, in, running, fresh)
	})
}

// runWhole runs a whole apply the way the CLI does and returns its report.
func runWhole(t *testing.T, w *world, pkgPath, inventory string, dry bool) *reportView {
	t.Helper()
	return &reportView{e2eutil.RunWhole(t, w.runOptions(pkgPath, inventory, dry), w.phases())}
}
