package podnet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Package is the import path of the daemon's main package.
const Package = "github.com/colonel-byte/cargoship/test/k8s/podnet/cmd/podnet"

// BuildBinary builds the daemon as a static linux/amd64 binary at
// outDir/podnet and returns its path. It runs `go build` in the current
// directory, which must be inside the cargoship module (a test's is). The
// build is reproducible: no cgo, trimmed paths, no VCS stamp, no build
// ID, so one source gives one binary and Image one digest.
func BuildBinary(ctx context.Context, outDir string) (string, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("build podnet: %w", err)
	}
	out, err := filepath.Abs(filepath.Join(outDir, "podnet"))
	if err != nil {
		return "", fmt.Errorf("build podnet: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w -buildid=", "-o", out, Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build podnet: go build %s: %w: %s", Package, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
