package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMkdirCgroupFillsAnEmptyCpuset_Root: hosts come up in parallel, and
// one may find the shared parent cgroup another has just made with its
// cpuset still empty. Making a host's cgroup below it fills both, so a
// process can join (an empty v1 cpuset refuses it with ENOSPC).
func TestMkdirCgroupFillsAnEmptyCpuset_Root(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root: it makes cgroups (run it as root, as hack/test.sh does)")
	}
	var h hierarchy
	for _, c := range hierarchies() {
		if !c.v2 && hasOption(c.opts, "cpuset") {
			h = c
		}
	}
	if h.point == "" {
		t.Fatal("no v1 cpuset hierarchy is mounted here; the container fleet's hosts need one on a cgroup v1 machine")
	}
	parent := filepath.Join(h.point, "cargoship-test-"+strconv.Itoa(os.Getpid()))
	child := filepath.Join(parent, "host")
	t.Cleanup(func() { _ = os.Remove(child); _ = os.Remove(parent) })
	// what the other host left: the directory, its cpuset not yet written
	require.NoError(t, os.Mkdir(parent, 0o755))
	assert.False(t, cpusetFilled(parent), "a new v1 cpuset is empty")

	require.NoError(t, mkdirCgroup(h, child))
	for _, d := range []string{parent, child} {
		assert.True(t, cpusetFilled(d), "%s has CPUs and memory nodes", d)
	}
	// a process may join it now
	sleep := exec.Command("sleep", "60")
	require.NoError(t, sleep.Start())
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	require.NoError(t, os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0), "joining the filled cgroup")
	b, err := os.ReadFile(filepath.Join(child, "cgroup.procs"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(sleep.Process.Pid), strings.TrimSpace(string(b)))
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
}
