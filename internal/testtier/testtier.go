// Package testtier marks the tests `go test ./...` leaves out when a
// normal user runs it: the root tier (tests that need root: real sshd,
// network namespaces, containers, chroots) and the slow tier (tests that
// build the test engine, release binaries or packages, or bring up engine
// processes: minutes, not seconds). A gated test calls Root or Slow as its
// first line; the skip message says why it was skipped and the command
// that runs it. hack/test.sh runs as root and sets SlowEnv, so CI runs
// every tier (docs/e2e.md, Test tiers).
package testtier

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/internal/repo"
)

// SlowEnv is the variable that opts a normal user into the slow tier:
// a boolean (true/false/1/0); anything else fails the test rather than
// reading as false.
const SlowEnv = "CARGOSHIP_TEST_SLOW"

// Root skips t unless the process runs as root. why says what the test
// needs root for.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	t.Skipf("root tier: needs root: %s; run it with `sudo env \"PATH=$PATH\" %s` or ./hack/test.sh", why, command(t))
}

// Slow skips t unless the process runs as root or SlowEnv is true. why
// says what makes the test slow.
func Slow(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	on, err := slowOn(os.Getenv(SlowEnv))
	if err != nil {
		t.Fatal(err)
	}
	if on {
		return
	}
	t.Skipf("slow tier: %s; run it with `%s=1 %s` or ./hack/test.sh", why, SlowEnv, command(t))
}

// slowOn reads SlowEnv's value; unset or empty is false.
func slowOn(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true, false, 1 or 0", SlowEnv, v)
	}
	return on, nil
}

// command is the go test command that runs t's top-level test alone, from
// the root of the checkout.
func command(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test -count=1 -run '^%s$' %s", name, packageDir())
}

// packageDir is the working directory (go test runs a test binary in its
// package's directory) as ./path from the root of the checkout, or "./..."
// when it is not inside the checkout.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "./..."
	}
	root, err := repo.Root()
	if err != nil {
		return "./..."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "./..."
	}
	if rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel) + "/"
}
