//go:build mage

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// Test holds the test tiers: test:fast is `go test ./...` as it runs for
// you; the others run a tier of hack/test.sh, the code CI runs, as root
// (through sudo when you are not; docs/e2e.md, Test tiers).
type Test mg.Namespace

// Fast runs `go test ./...` as you, then lists every skipped test with its reason (the root and slow tiers among them).
func (Test) Fast() error {
	if os.Geteuid() == 0 {
		// As root nothing skips: go test ./... would bring up the fleet
		// suites under go test's 10-minute default timeout.
		return errors.New("test:fast is the tier a normal user runs; as root every test runs, the fleet suites too: run ./hack/test.sh (or a tier of it) instead")
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c, serr := testtier.Summarize(out, os.Stdout)
	if serr != nil {
		// Let go test finish rather than block on a full pipe.
		_, _ = io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if serr != nil {
		return serr
	}
	if !c.OK() {
		return fmt.Errorf("go test ./...: %d failed, %d packages did not build", c.Failed, c.BuildFailed)
	}
	if werr != nil {
		// A package that failed outside any test (its TestMain, a
		// timeout): go test's own lines above say which.
		return fmt.Errorf("go test ./...: %w", werr)
	}
	return nil
}

// Unit runs hack/test.sh's unit tier: every package outside test/, its root and slow tests included.
func (Test) Unit() error { return testSh("unit") }

// EndToEndClusterStage runs hack/test.sh's stage tier: the staging half of apply on a container fleet.
func (Test) EndToEndClusterStage() error { return testSh("stage") }

// EndToEndCluster runs hack/test.sh's full and ha tiers: apply, converged, labels, join, upgrade and reset on a container fleet, then the three-controller and VIP walks; CARGOSHIP_E2E_DISTRO, _PACKAGE and the other knobs pass through.
func (Test) EndToEndCluster() error { return testSh("full", "ha") }

// testSh runs ./hack/test.sh with tiers, its output on this terminal.
func testSh(tiers ...string) error {
	return sh.RunV("./hack/test.sh", tiers...)
}
