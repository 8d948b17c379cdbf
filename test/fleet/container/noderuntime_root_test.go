package container

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// TestNodeRuntimeContainerd_Root brings up a NodeRuntime host and runs a
// container in it with Debian's containerd and runc: its memory limit is
// set in the host's own cgroup as this machine sees it, and enforced; the
// container's process is below the host's cgroup in every v1 hierarchy.
// A power cut kills it with the host, and the host runs containers again
// after PowerOn. Down then leaves no process, mount or cgroup.
func TestNodeRuntimeContainerd_Root(t *testing.T) {
	c := newRootBackend(t)
	const name, host = "rtnode", "kc0"
	debs := nodeDebs(t, c)
	image := probeImage(t)
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 1, Image: ImageBase, NodeRuntime: true})
	installContainerd(t, f, host, debs, image, false)
	mem := hostCgroup(t, name, host, "memory")
	const limit = "67108864" // 64 MiB

	t.Run("ctr run with a memory limit", func(t *testing.T) {
		run(t, f, host, fleet.UserRoot, "ctr run -d --memory-limit "+limit+" "+probeRef+" t1")
		dir := filepath.Join(mem, "default", "t1")
		if got := readTrim(t, filepath.Join(dir, "memory.limit_in_bytes")); got != limit {
			t.Errorf("%s/memory.limit_in_bytes = %s, want %s", dir, got, limit)
		}
		assertInHostCgroups(t, name, host, cgroupPidsOf(t, dir), dir)
	})

	t.Run("the limit is enforced", func(t *testing.T) {
		got := run(t, f, host, fleet.UserRoot, "ctr run --rm --memory-limit "+limit+" "+probeRef+" hog /nodeprobe hog 256; echo rc=$?")
		if !strings.HasSuffix(got, "rc=137") {
			t.Errorf("256 MiB under a 64 MiB limit: %q, want an OOM kill (rc=137)", got)
		}
		got = run(t, f, host, fleet.UserRoot, "ctr run --rm --memory-limit "+limit+" "+probeRef+" small /nodeprobe hog 16; echo rc=$?")
		if got != "allocated 16 MiB\nrc=0" {
			t.Errorf("16 MiB under a 64 MiB limit: %q", got)
		}
	})

	t.Run("power cut and on", func(t *testing.T) {
		before := fleetPids(name)
		if err := c.PowerOff(context.Background(), name, host); err != nil {
			t.Fatal(err)
		}
		for _, pid := range before {
			if backend.Alive(pid) {
				t.Errorf("pid %d of the host runs after the power cut", pid)
			}
		}
		if err := c.PowerOn(context.Background(), name, host); err != nil {
			t.Fatal(err)
		}
		run(t, f, host, fleet.UserRoot, "systemctl is-active containerd && ctr run -d --memory-limit "+limit+" "+probeRef+" t2")
		dir := filepath.Join(mem, "default", "t2")
		if got := readTrim(t, filepath.Join(dir, "memory.limit_in_bytes")); got != limit {
			t.Errorf("after PowerOn: %s/memory.limit_in_bytes = %s, want %s", dir, got, limit)
		}
	})

	downLeavesNothing(t, c, name, f.Dir)
}
