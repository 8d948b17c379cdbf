package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mountedAt reports whether /proc/self/mounts lists p as a mount point.
func mountedAt(t *testing.T, p string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mounts")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == p {
			return true
		}
	}
	return false
}

// bind bind-mounts src on dst for the test, unmounted at its end if the
// code under test left it.
func bind(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dst, 0o755))
	if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here: %v %s", err, out)
	}
	t.Cleanup(func() {
		for mountedAt(t, dst) {
			if exec.Command("umount", "-l", dst).Run() != nil {
				return
			}
		}
	})
}

// TestResetUnmountsUnderTheStateDirAndKeepsWhatTheMountHolds: a volume
// left mounted under /var/lib/kubelet (one bind mount inside another, the
// same file system as the directory) is unmounted, deepest first, before
// the directory goes: what the mounts hold stays where it lives.
func TestResetUnmountsUnderTheStateDirAndKeepsWhatTheMountHolds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	s, h, _, at := resetHost(t)
	vol, inner := t.TempDir(), t.TempDir()
	write(t, filepath.Join(vol, "data"), "the volume's\n")
	write(t, filepath.Join(inner, "data"), "the inner volume's\n")
	require.NoError(t, os.Mkdir(filepath.Join(vol, "inner"), 0o755))
	v := at("/var/lib/kubelet/pods/p1/volumes/v")
	bind(t, vol, v)
	bind(t, inner, filepath.Join(v, "inner"))
	write(t, at("/var/lib/kubelet/pods/p1/etc-hosts"), "the pod's\n")
	ctx := context.Background()
	u := s.UninstallFor(h, nil)

	plan, err := s.PlanUninstall(ctx, h, u)
	require.NoError(t, err)
	var what []string
	for _, c := range plan {
		what = append(what, c.What)
	}
	assert.Contains(t, what, "remove /var/lib/kubelet")
	assert.True(t, mountedAt(t, v), "planning changes nothing")

	err = s.UninstallNode(ctx, h, "Stop and uninstall", u)
	// what the mounts held first: the old reset removed it and then failed
	for f, want := range map[string]string{filepath.Join(vol, "data"): "the volume's\n", filepath.Join(inner, "data"): "the inner volume's\n"} {
		b, _ := os.ReadFile(f)
		assert.Equal(t, want, string(b), "what a mount held stays")
	}
	require.NoError(t, err)
	var did []string
	for _, c := range s.Report.Changes() {
		did = append(did, c.What)
	}
	assert.Contains(t, did, "unmounted "+filepath.Join(v, "inner")+" (what it holds stays on its file system)")
	assert.Contains(t, did, "removed /var/lib/kubelet")
	assert.False(t, mountedAt(t, v), "unmounted")
	assert.False(t, mountedAt(t, filepath.Join(v, "inner")), "unmounted")
	assert.False(t, exists(t, at("/var/lib/kubelet")), "the state directory is gone")
}

// TestResetEmptiesAStateDirThatIsAMountPoint: a data disk mounted at
// /var/lib/rancher/k3s itself stays mounted (its fstab line would not
// find a removed mount point at the next boot) and is emptied of the
// engine's state, on its own file system only.
func TestResetEmptiesAStateDirThatIsAMountPoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	s, h, _, at := resetHost(t)
	disk, vol := t.TempDir(), t.TempDir()
	write(t, filepath.Join(disk, "server/db/state.db"), "the engine's\n")
	write(t, filepath.Join(disk, ".hidden"), "the engine's\n")
	write(t, filepath.Join(vol, "data"), "the volume's\n")
	require.NoError(t, os.MkdirAll(filepath.Join(disk, "agent/vol"), 0o755))
	d := at("/var/lib/rancher/k3s")
	bind(t, disk, d)
	bind(t, vol, filepath.Join(d, "agent/vol"))
	ctx := context.Background()
	u := s.UninstallFor(h, nil)

	plan, err := s.PlanUninstall(ctx, h, u)
	require.NoError(t, err)
	var what []string
	for _, c := range plan {
		what = append(what, c.What)
	}
	assert.Contains(t, what, "empty /var/lib/rancher/k3s"+mountedHere)

	require.NoError(t, s.UninstallNode(ctx, h, "Stop and uninstall", u))
	assert.True(t, mountedAt(t, d), "the disk stays mounted")
	left, err := os.ReadDir(disk)
	require.NoError(t, err)
	assert.Empty(t, left, "the engine's state is gone from the disk")
	b, _ := os.ReadFile(filepath.Join(vol, "data"))
	assert.Equal(t, "the volume's\n", string(b), "what a mount below held stays")
}
