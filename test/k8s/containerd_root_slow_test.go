package k8s

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// containerdConfig is a containerd of the test's own: its root, state and
// socket in dir, the CRI plugin off (this test only imports).
func containerdConfig(dir string) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]

[grpc]
  address = %q

[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), filepath.Join(dir, "c.sock"), filepath.Join(dir, "t.sock"))
}

// The build's containerd imports every image tarball with its ctr (as a
// node's import does, into the k8s.io namespace kubelet uses) and unpacks
// it, under the references kubeadm looks for.
func TestSlowRootContainerdImportsImages(t *testing.T) {
	testtier.Root(t, "runs containerd, which mounts its snapshots")
	a := built(t, V1_35_4)
	dir, err := os.MkdirTemp("", "k8s-ctrd-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(containerdConfig(dir)), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	daemon := exec.CommandContext(ctx, a.Path("containerd"), "--config", cfg)
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	require.NoError(t, err)
	defer log.Close()
	daemon.Stdout, daemon.Stderr = log, log
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})

	sock := filepath.Join(dir, "c.sock")
	ctr := func(args ...string) string {
		return output(t, a.Path("ctr"), append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...)
	}
	require.Eventually(t, func() bool {
		return exec.Command(a.Path("ctr"), "--address", sock, "version").Run() == nil
	}, time.Minute, 200*time.Millisecond, "containerd did not answer; its log: %s", filepath.Join(dir, "containerd.log"))

	for _, img := range a.Images {
		ctr("images", "import", "--platform", "linux/amd64", img.Tarball)
	}
	listed := ctr("images", "list", "--quiet")
	for _, img := range a.Images {
		assert.Contains(t, strings.Fields(listed), img.Ref)
	}
	// Each image is complete and its layers unpacked into the default
	// snapshotter: `ctr images check` ends its line with UNPACKED true.
	for _, img := range a.Images {
		var row []string
		for _, line := range strings.Split(ctr("images", "check", "name=="+img.Ref), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == img.Ref {
				row = f
			}
		}
		require.NotEmpty(t, row, "ctr images check lists no %s", img.Ref)
		assert.Equal(t, "complete", row[3], img.Ref)
		assert.Equal(t, "true", row[len(row)-1], "%s unpacked", img.Ref)
	}
}
