package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// The suite's own fleet, so it never meets the other suites' fleets (and
// needs none of their locks), as small as an apply with a join allows.
const fleetName = "clijson"

// world is the fleet, the package applied to it and the binary that
// applies it.
type world struct {
	fleet *fleet.Fleet
	pkg   *e2eutil.TestPackage
	bin   string
}

// setUp brings the fleet up while the package and the binary build.
func setUp(t *testing.T) *world {
	t.Helper()
	w := &world{}
	sw := e2eutil.SetUpSuite(t, fleet.Spec{Name: fleetName, Control: 1, Worker: 1, Image: container.ImageBase}, e2eutil.SuiteNeeds{
		Binary: true,
		Build:  func() { w.pkg = e2eutil.BuildTestPackage(t, e2eutil.EngineVersion, e2eutil.EngineVersionBuilt) },
	})
	w.fleet, w.bin = sw.Fleet, sw.Bin
	return w
}

// result is how one command ended: its exit status and its two streams.
type result struct {
	code           int
	stdout, stderr []byte
}

// cargoship runs the binary with args in a directory of its own, with HOME
// there so no settings file of this machine is read, and the fleet's
// known_hosts. A status other than an exit (a signal) fails the test.
func (w *world) cargoship(t *testing.T, args ...string) result {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.bin, args...)
	cmd.Dir = home
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"TMPDIR=" + os.TempDir(), "SSH_KNOWN_HOSTS=" + w.fleet.KnownHostsPath,
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit) && exit.Exited():
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("cargoship %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	t.Logf("cargoship %s: exit %d after %s", strings.Join(args, " "), code, time.Since(start).Round(time.Second))
	return result{code: code, stdout: stdout.Bytes(), stderr: stderr.Bytes()}
}
