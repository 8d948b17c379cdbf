package cluster

import (
	"testing"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

type testPackage = e2eutil.TestPackage

// buildTestPackage builds the suite's test package for the run's distro
// (test/e2e/e2eutil, shared with the other suites): at its installed
// version, or at the one the upgrade walk moves to.
func buildTestPackage(t testing.TB, d e2eutil.Distro, upgrade bool) *testPackage {
	t.Helper()
	if upgrade {
		return e2eutil.BuildDistroPackage(t, d, d.Upgrade, d.UpgradeBuilt)
	}
	return e2eutil.BuildDistroPackage(t, d, d.Version, d.Built)
}

func createPackage(t testing.TB, dir string) string {
	t.Helper()
	return e2eutil.CreatePackage(t, dir)
}
