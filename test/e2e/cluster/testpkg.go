package cluster

import (
	"testing"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// The test package and the engine versions the walks use are shared with
// the other suites (test/e2e/e2eutil).
const (
	engineVersion      = e2eutil.EngineVersion
	engineVersionBuilt = e2eutil.EngineVersionBuilt
	upgradeVersion     = e2eutil.UpgradeVersion
	upgradeBuilt       = e2eutil.UpgradeBuilt
)

type testPackage = e2eutil.TestPackage

func buildTestPackage(t testing.TB, version, builtVersion string) *testPackage {
	t.Helper()
	return e2eutil.BuildTestPackage(t, version, builtVersion)
}

func createPackage(t testing.TB, dir string) string {
	t.Helper()
	return e2eutil.CreatePackage(t, dir)
}
