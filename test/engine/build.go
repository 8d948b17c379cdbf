package testengine

import (
	"context"
	"crypto/sha1" //nolint:gosec // a stand-in git commit id, not security
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildinfoPackage is where the version is stamped (-ldflags -X).
const buildinfoPackage = "github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"

// mainPackage is the test engine's main package.
const mainPackage = "github.com/colonel-byte/cargoship/test/engine/cmd/testengine"

// Binary says which engine binary to build.
type Binary struct {
	// Engine is k3s or rke2.
	Engine string
	// Version is the release it reports, e.g. v1.35.3+k3s1.
	Version string
	// Commit is the git commit it reports; a stand-in derived from the
	// version when empty.
	Commit string
}

// Build compiles the test engine into dir/<engine> and returns its path.
// It must run inside the cargoship module (tests do). rke2 is built with
// GOEXPERIMENT=boringcrypto as rke2 releases are, which shows in the Go
// line of --version.
func Build(ctx context.Context, dir string, b Binary) (string, error) {
	if b.Engine != "k3s" && b.Engine != "rke2" {
		return "", fmt.Errorf("engine %q: want k3s or rke2", b.Engine)
	}
	commit := b.Commit
	if commit == "" {
		sum := sha1.Sum([]byte(b.Version)) //nolint:gosec
		commit = hex.EncodeToString(sum[:])
	}
	out := filepath.Join(dir, b.Engine)
	ldflags := strings.Join([]string{
		"-s", "-w",
		"-X", buildinfoPackage + ".Version=" + b.Version,
		"-X", buildinfoPackage + ".GitCommit=" + commit,
		"-X", buildinfoPackage + ".Engine=" + b.Engine,
	}, " ")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, mainPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b.Engine == "rke2" {
		cmd.Env = append(cmd.Env, "GOEXPERIMENT=boringcrypto")
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build test engine %s %s: %w\n%s", b.Engine, b.Version, err, msg)
	}
	return out, nil
}
