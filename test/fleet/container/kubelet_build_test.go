package container

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/k8s"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// The kubelet the NodeRuntime kubelet test runs: Kubernetes 1.35.4, static,
// from the Go module proxy.
const (
	kubeletVersion = "1.35.4"
	// the staging modules' tag of that release (k8s.io/api v0.35.4, ...)
	kubeletStaging = "v0.35.4"
)

// kubeletBinary finds or builds the kubelet: $CARGOSHIP_FLEET_KUBELET if
// set, else one from a finished test/k8s build of the release, else one
// built here alone (a few minutes, then cached in the fleet cache).
func kubeletBinary(t *testing.T, c *Container) string {
	t.Helper()
	if p := os.Getenv("CARGOSHIP_FLEET_KUBELET"); p != "" {
		if !fileExists(p) {
			t.Fatalf("CARGOSHIP_FLEET_KUBELET=%s: no such file", p)
		}
		return p
	}
	if root, err := k8s.CacheRoot(); err == nil {
		dirs, _ := filepath.Glob(filepath.Join(root, "v"+kubeletVersion+"-*"))
		for _, d := range dirs {
			// test/k8s stamps a build .complete when it is done
			if bin := filepath.Join(d, "bin", "kubelet"); fileExists(filepath.Join(d, ".complete")) && fileExists(bin) {
				t.Logf("kubelet from the test/k8s build %s", d)
				return bin
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin, err := buildKubelet(ctx, c, filepath.Join(c.opts.CacheDir, "kubelet", "v"+kubeletVersion))
	if err != nil {
		t.Fatalf("no kubelet: not in CARGOSHIP_FLEET_KUBELET nor a test/k8s build, and building it failed: %v", err)
	}
	return bin
}

// buildKubelet builds cmd/kubelet into dir once: a scratch module that
// requires k8s.io/kubernetes and points each staging module at its
// release tag, as the kubernetes module's own replace block points them at
// its staging/ tree.
func buildKubelet(ctx context.Context, c *Container, dir string) (string, error) {
	bin, stamp := filepath.Join(dir, "kubelet"), filepath.Join(dir, ".stamp")
	lock, err := fleet.AcquireLock(ctx, dir+".lock", "kubelet build", c.opts.Logger)
	if err != nil {
		return "", err
	}
	defer lock.Release()
	if fileExists(stamp) && fileExists(bin) {
		return bin, nil
	}
	c.opts.Logger.Info("building kubelet v" + kubeletVersion + " from the Go module proxy (about 6 min the first time)")
	start := time.Now()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	gomod, err := kubeletGoMod(ctx)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	x := "-X k8s.io/component-base/version."
	ldflags := "-s -w " + x + "gitVersion=v" + kubeletVersion + " " + x + "gitMajor=1 " + x + "gitMinor=35 " + x + "gitTreeState=clean"
	cmd := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", bin+".tmp", "k8s.io/kubernetes/cmd/kubelet")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build k8s.io/kubernetes/cmd/kubelet@v%s: %w\n%s", kubeletVersion, err, fleet.Tail(string(out), 2000))
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", err
	}
	if err := os.WriteFile(stamp, []byte("kubelet v"+kubeletVersion+" built in "+fleet.Since(start).String()+"\n"), 0o644); err != nil {
		return "", err
	}
	c.opts.Logger.Info("built kubelet v" + kubeletVersion + " in " + fleet.Since(start).String())
	return bin, nil
}

// kubeletGoMod is the scratch module's go.mod, its replace lines taken from
// k8s.io/kubernetes's own go.mod.
func kubeletGoMod(ctx context.Context) (string, error) {
	out, err := command(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@v"+kubeletVersion)
	if err != nil {
		return "", err
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return "", fmt.Errorf("go mod download -json: %w", err)
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download k8s.io/kubernetes@v%s: %s", kubeletVersion, info.Error)
	}
	b, err := os.ReadFile(info.GoMod)
	if err != nil {
		return "", err
	}
	var mod strings.Builder
	mod.WriteString("module scratch/kubelet\n\ngo 1.25.0\n\nrequire k8s.io/kubernetes v" + kubeletVersion + "\n\nreplace (\n")
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "=>" && strings.HasPrefix(f[2], "./staging/") {
			fmt.Fprintf(&mod, "\t%s => %s %s\n", f[0], f[0], kubeletStaging)
			n++
		}
	}
	if n == 0 {
		return "", fmt.Errorf("%s has no replace lines into ./staging/", info.GoMod)
	}
	mod.WriteString(")\n")
	return mod.String(), nil
}
