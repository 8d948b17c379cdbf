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

// startContainerd runs the build's containerd with a root, state and
// socket of its own (its PATH leads to the build's shim and runc) until
// the test ends, and returns a ctr in its k8s.io namespace.
func startContainerd(t *testing.T, a *Artifacts) func(args ...string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "k8s-ctrd-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(containerdConfig(dir)), 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	daemon := exec.CommandContext(ctx, a.Path("containerd"), "--config", cfg)
	daemon.Env = append(os.Environ(), "PATH="+a.BinDir+":"+os.Getenv("PATH"))
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	require.NoError(t, err)
	daemon.Stdout, daemon.Stderr = log, log
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		cancel()
		_ = daemon.Wait()
		_ = log.Close()
	})

	sock := filepath.Join(dir, "c.sock")
	require.Eventually(t, func() bool {
		return exec.Command(a.Path("ctr"), "--address", sock, "version").Run() == nil
	}, time.Minute, 200*time.Millisecond, "containerd did not answer; its log: %s", filepath.Join(dir, "containerd.log"))
	return func(args ...string) string {
		return output(t, a.Path("ctr"), append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...)
	}
}

// The build's containerd imports every image tarball with its ctr (as a
// node's import does, into the k8s.io namespace kubelet uses) and unpacks
// it, under the references kubeadm looks for.
func TestSlowRootContainerdImportsImages(t *testing.T) {
	testtier.Root(t, "runs containerd, which mounts its snapshots")
	a := built(t, V1_35_4)
	ctr := startContainerd(t, a)
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

// Containers run from the images with the build's containerd, shim and
// runc: pause, CoreDNS, etcd and kube-proxy's iptables. Their cgroups go
// under a parent of the test's own, removed at its end.
func TestSlowRootContainersRun(t *testing.T) {
	testtier.Root(t, "runs containers with containerd and runc, in cgroups of the test's own")
	a := built(t, V1_35_4)
	ctr := startContainerd(t, a)
	parent := fmt.Sprintf("cargoship-k8s-test-%d", os.Getpid())
	t.Cleanup(func() { removeCgroups(parent) })
	images := map[string]Image{}
	for _, img := range a.Images {
		images[img.Name] = img
	}
	r := a.Release
	for i, c := range []struct {
		image string
		argv  []string
		want  string
	}{
		{"pause", []string{"/pause", "-v"}, "pause.go v" + r.Pause},
		{"coredns", []string{"/coredns", "-version"}, "CoreDNS-" + r.CoreDNS},
		{"etcd", []string{"etcd", "--version"}, "etcd Version: " + r.Etcd},
		{"kube-proxy", []string{"iptables-save", "--version"}, "nf_tables"},
		{"kube-apiserver", []string{"kube-apiserver", "--version"}, "Kubernetes v" + r.Kubernetes},
	} {
		img := images[c.image]
		ctr("images", "import", "--platform", "linux/amd64", img.Tarball)
		id := fmt.Sprintf("k8s-test-%d", i)
		args := append([]string{"run", "--rm", "--cgroup", "/" + parent + "/" + id, img.Ref, id}, c.argv...)
		assert.Contains(t, ctr(args...), c.want, c.image)
	}
}

// removeCgroups removes a cgroup parent (and its empty children) from
// every hierarchy mounted under /sys/fs/cgroup, v1 or v2.
func removeCgroups(parent string) {
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", parent))
	more, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", parent))
	for _, d := range append(dirs, more...) {
		children, _ := filepath.Glob(filepath.Join(d, "*"))
		for _, c := range children {
			if fi, err := os.Stat(c); err == nil && fi.IsDir() {
				_ = os.Remove(c)
			}
		}
		_ = os.Remove(d)
	}
}
