//go:build mage

package main

import (
	"os"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// Test holds the test tiers hack/test.sh runs, one target each, with the
// flags hack/test.sh gives them (docs/e2e.md).
type Test mg.Namespace

// Unit runs the unit tests: no root, no hosts.
func (Test) Unit() error {
	return goTest(nil, "-timeout", "25m", "./pkg/...", "./cmd/...", "./hack/...", "./internal/...")
}

// EndToEndClusterStage walks the staging half of apply on a container fleet (root).
func (Test) EndToEndClusterStage() error {
	return goTest(map[string]string{"CARGOSHIP_E2E_STAGE_ONLY": "1"}, "-timeout", "40m", "-v", "./test/e2e/cluster/...")
}

// EndToEndCluster walks apply, converged, labels, join, upgrade and reset on a container fleet (root); CARGOSHIP_E2E_DISTRO, _PACKAGE and the other knobs pass through.
func (Test) EndToEndCluster() error {
	env := map[string]string{}
	_, set := os.LookupEnv("CARGOSHIP_E2E_UPGRADE")
	// As hack/test.sh's full walk; a package of the user's upgrades only
	// to the one CARGOSHIP_E2E_UPGRADE_PACKAGE names.
	if !set && os.Getenv("CARGOSHIP_E2E_PACKAGE") == "" {
		env["CARGOSHIP_E2E_UPGRADE"] = "1"
	}
	return goTest(env, "-timeout", "40m", "-v", "./test/e2e/cluster/...")
}

// goTest runs go test -count=1 with env added to this process's
// environment, its output on this terminal.
func goTest(env map[string]string, args ...string) error {
	return sh.RunWithV(env, "go", append([]string{"test", "-count=1"}, args...)...)
}
