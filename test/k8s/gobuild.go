package k8s

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// goBuild is one `go build` of packages from modules on the proxy, run in
// a scratch module of its own whose go.mod requires (and replaces) what
// the build needs. One go build builds every package it is given, so
// what they share is compiled once.
type goBuild struct {
	// Dir is the scratch module's directory.
	Dir string
	// Module is the scratch module's path (cargoship.test/k8sbuild if
	// empty); a package at its root is built to a binary of its last
	// element.
	Module string
	// Require is "module version" lines.
	Require []string
	// Replace is "old => new version" lines.
	Replace []string
	// Packages are the main packages to build.
	Packages []string
	// Out is the directory the binaries are written to.
	Out string
	// Tags are build tags.
	Tags []string
	// LDFlags is -ldflags.
	LDFlags string
	// Env is added to the environment (CGO_ENABLED=0 unless it says
	// otherwise).
	Env []string
}

// buildParallelism is go build's -p: $CARGOSHIP_K8S_BUILD_P, else 2 (the
// machines this runs on have two cores, shared).
func buildParallelism() string {
	if p := os.Getenv("CARGOSHIP_K8S_BUILD_P"); p != "" {
		return p
	}
	return "2"
}

var (
	goVersionOnce sync.Once
	goVersion     string
	goVersionErr  error
)

// toolchainVersion is `go env GOVERSION` of the go on PATH ("go1.26.8"):
// the scratch modules' go line, and part of a build's cache key.
func toolchainVersion(ctx context.Context) (string, error) {
	goVersionOnce.Do(func() {
		out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
		if err != nil {
			goVersionErr = fmt.Errorf("go env GOVERSION: %w", err)
			return
		}
		goVersion = strings.TrimSpace(string(out))
	})
	return goVersion, goVersionErr
}

// languageVersion is a toolchain's language version: 1.26 for go1.26.8.
func languageVersion(toolchain string) string {
	v := strings.TrimPrefix(toolchain, "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// goMod is the scratch module's go.mod.
func (b goBuild) goMod(toolchain string) string {
	module := b.Module
	if module == "" {
		module = "cargoship.test/k8sbuild"
	}
	var s strings.Builder
	fmt.Fprintf(&s, "module %s\n\ngo %s\n", module, languageVersion(toolchain))
	if len(b.Require) > 0 {
		s.WriteString("\nrequire (\n")
		for _, r := range b.Require {
			fmt.Fprintf(&s, "\t%s\n", r)
		}
		s.WriteString(")\n")
	}
	if len(b.Replace) > 0 {
		s.WriteString("\nreplace (\n")
		for _, r := range b.Replace {
			fmt.Fprintf(&s, "\t%s\n", r)
		}
		s.WriteString(")\n")
	}
	return s.String()
}

// run writes the scratch module and builds. go build's output goes to
// build.log in the scratch module; its tail is in the error.
func (b goBuild) run(ctx context.Context) error {
	toolchain, err := toolchainVersion(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return fmt.Errorf("scratch module %s: %w", b.Dir, err)
	}
	if err := os.WriteFile(filepath.Join(b.Dir, "go.mod"), []byte(b.goMod(toolchain)), 0o644); err != nil {
		return fmt.Errorf("scratch module %s: %w", b.Dir, err)
	}
	if err := os.MkdirAll(b.Out, 0o755); err != nil {
		return fmt.Errorf("build output %s: %w", b.Out, err)
	}
	args := []string{"build", "-p", buildParallelism(), "-trimpath", "-o", b.Out + string(filepath.Separator)}
	if len(b.Tags) > 0 {
		args = append(args, "-tags", strings.Join(b.Tags, ","))
	}
	if b.LDFlags != "" {
		args = append(args, "-ldflags", b.LDFlags)
	}
	args = append(args, b.Packages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOWORK=off",
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod -buildvcs=false")
	cmd.Env = append(cmd.Env, b.Env...)
	logPath := filepath.Join(b.Dir, "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("build log %s: %w", logPath, err)
	}
	defer logFile.Close()
	var tail tailBuffer
	cmd.Stdout = logFile
	cmd.Stderr = &multiWriter{logFile, &tail}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s (in %s; log %s): %w\n%s", strings.Join(args, " "), b.Dir, logPath, err, tail.String())
	}
	return nil
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(bytes.TrimSpace(t.b)) }

// multiWriter writes to a file and a tail; the file's errors are the
// build's, not the write's.
type multiWriter struct {
	f *os.File
	t *tailBuffer
}

func (m *multiWriter) Write(p []byte) (int, error) {
	_, _ = m.f.Write(p)
	return m.t.Write(p)
}

// ldflagsX joins -X settings: "-X k=v -X k2=v2".
func ldflagsX(settings ...string) string {
	parts := make([]string, 0, 2*len(settings))
	for _, s := range settings {
		parts = append(parts, "-X", s)
	}
	return strings.Join(parts, " ")
}
