package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// The suite's own fleet, so it never meets the other suites' fleets (and
// needs none of their locks), as small as an apply with a join allows.
const (
	fleetName = "clijson"
	keepEnv   = "CARGOSHIP_E2E_KEEP_FLEET"
)

// world is the fleet, the package applied to it and the binary that
// applies it.
type world struct {
	fleet *fleet.Fleet
	pkg   *e2eutil.TestPackage
	bin   string
}

// setUp brings the fleet up while the package and the binary build: the
// machine has few cores and most of the fleet's time is waiting.
func setUp(t *testing.T) *world {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the container fleet needs root (network namespaces, overlay mounts, systemd-nspawn): run as root, as CI does")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	prov, err := fleet.NewContainer(fleet.Options{Logger: e2eutil.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	// A run killed before its teardown leaves its fleet behind; a stale
	// fleet is never adopted.
	if err := prov.Down(ctx, fleetName); err != nil {
		t.Fatalf("removing a stale %s fleet: %v", fleetName, err)
	}
	w := &world{}
	up := make(chan error, 1)
	go func() {
		f, err := prov.Up(ctx, fleet.Spec{Name: fleetName, Control: 1, Worker: 1, Image: fleet.ImageBase})
		w.fleet = f
		up <- err
	}()
	type built struct {
		bin string
		err error
	}
	binc := make(chan built, 1)
	go func() {
		bin, err := buildCargoship(ctx, t.TempDir())
		binc <- built{bin, err}
	}()
	t.Cleanup(func() {
		if os.Getenv(keepEnv) != "" {
			t.Logf("%s set: the fleet stays up; remove it with `mage dev:fleetDown -fleet=%s`", keepEnv, fleetName)
			return
		}
		if err := prov.Down(context.Background(), fleetName); err != nil {
			t.Errorf("tearing down the fleet: %v", err)
		}
	})
	w.pkg = e2eutil.BuildTestPackage(t, e2eutil.EngineVersion, e2eutil.EngineVersionBuilt)
	if err := <-up; err != nil {
		t.Fatalf("bringing up the %s fleet: %v", fleetName, err)
	}
	b := <-binc
	if b.err != nil {
		t.Fatal(b.err)
	}
	w.bin = b.bin
	return w
}

// buildCargoship builds the binary under test into dir: the exit status
// and the streams are the real command's, not this process's.
func buildCargoship(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cargoship")
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cargoship")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cargoship: %w\n%s", err, out)
	}
	return bin, nil
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
