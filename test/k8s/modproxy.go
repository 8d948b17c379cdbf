package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// moduleInfo is what `go mod download -json` says of a module version.
type moduleInfo struct {
	Path, Version, Error string
	// Info, GoMod and Dir are files in the module cache.
	Info, GoMod, Dir string
	// Time is the version's commit time, from Info.
	Time time.Time
}

// downloadModule fetches path@version into the module cache (from the Go
// module proxy) and says where it is.
func downloadModule(ctx context.Context, path, version string) (moduleInfo, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var m moduleInfo
	if jerr := json.Unmarshal(out, &m); jerr != nil && err == nil {
		err = jerr
	}
	if m.Error != "" {
		return m, fmt.Errorf("go mod download %s@%s: %s", path, version, m.Error)
	}
	if err != nil {
		return m, fmt.Errorf("go mod download %s@%s: %w", path, version, err)
	}
	b, err := os.ReadFile(m.Info)
	if err != nil {
		return m, fmt.Errorf("go mod download %s@%s: %w", path, version, err)
	}
	var info struct{ Time time.Time }
	if err := json.Unmarshal(b, &info); err != nil {
		return m, fmt.Errorf("go mod download %s@%s: %s: %w", path, version, m.Info, err)
	}
	m.Time = info.Time.UTC()
	return m, nil
}
