package k8s

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// pauseSource is the pause program (cmd/pause), built in a scratch module
// of its own so a build does not depend on where it runs from.
//
//go:embed cmd/pause/main.go
var pauseSource []byte

// buildPause builds the pause program into out, its version the pause
// image's tag.
func buildPause(ctx context.Context, r Release, src, out string) error {
	dir := filepath.Join(src, "pause")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), pauseSource, 0o644); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	b := goBuild{
		Dir:      dir,
		Module:   "cargoship.test/pause",
		Packages: []string{"."},
		Out:      out,
		LDFlags:  "-s -w " + ldflagsX("main.version="+r.Pause),
	}
	return b.run(ctx)
}
