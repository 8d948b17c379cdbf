package container

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Helpers of the NodeRuntime root tests: putting containerd into a host,
// and looking at a host's cgroups from this machine.

// upload copies a local file to a host over SSH (root), with mode.
func upload(t *testing.T, f *fleet.Fleet, host, local, remote string, mode os.FileMode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := f.Dial(ctx, host, fleet.UserRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	in, err := os.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sess.Stdin = in
	cmd := fmt.Sprintf("mkdir -p %s && cat > %s && chmod %o %s", filepath.Dir(remote), remote, mode, remote)
	if out, err := sess.CombinedOutput(cmd); err != nil {
		t.Fatalf("%s: upload %s to %s: %v: %s", host, local, remote, err, out)
	}
}

// installBound bounds each step of installContainerd: dpkg starts
// containerd and waits for it, which took over a minute on a loaded CI
// machine.
const installBound = 5 * time.Minute

// installContainerd installs the packages in a host and configures
// containerd for it: runc's cgroup driver (systemdCgroup) to match the
// kubelet's, and restrict_oom_score_adj where this machine cannot lower an
// oom_score_adj (see containerdConfig).
func installContainerd(t *testing.T, f *fleet.Fleet, host string, debs []string, image string, systemdCgroup bool) {
	t.Helper()
	var remote []string
	for _, d := range debs {
		r := "/root/debs/" + filepath.Base(d)
		upload(t, f, host, d, r, 0o644)
		remote = append(remote, r)
	}
	upload(t, f, host, image, "/root/probe.tar", 0o644)
	runWithin(t, f, host, fleet.UserRoot, "DEBIAN_FRONTEND=noninteractive dpkg -i "+strings.Join(remote, " ")+" >/dev/null", installBound)
	runWithin(t, f, host, fleet.UserRoot, containerdConfig(systemdCgroup)+" && systemctl restart containerd", installBound)
	for _, ns := range []string{"default", "k8s.io"} {
		runWithin(t, f, host, fleet.UserRoot, "ctr -n "+ns+" image import /root/probe.tar >/dev/null", installBound)
	}
}

// containerdConfig is a shell command writing containerd's config: its
// defaults, with runc's SystemdCgroup set, and restrict_oom_score_adj when
// this machine's capability bounding set lacks CAP_SYS_RESOURCE (nothing
// in a host can then lower an oom_score_adj, and the CRI's pause container
// asks for -998: runc fails with "can't get final child's PID from pipe").
func containerdConfig(systemdCgroup bool) string {
	sed := fmt.Sprintf("-e 's/SystemdCgroup = false/SystemdCgroup = %t/'", systemdCgroup)
	if !hasCapability(capSysResource) {
		sed += " -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/'"
	}
	return "containerd config default | sed " + sed + " > /etc/containerd/config.toml"
}

const capSysResource = 24

// hasCapability reports whether cap is in this process's bounding set.
func hasCapability(cap uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<cap) != 0
		}
	}
	return false
}

// hostCgroup is a host's own cgroup directory, as this machine sees it, in
// the v1 hierarchy of controller.
func hostCgroup(t *testing.T, fleet, host, controller string) string {
	t.Helper()
	for _, h := range hierarchies() {
		if !h.v2 && hasOption(h.opts, controller) {
			if found := findCgroupsIn(h, netnsName(fleet, host)); len(found) == 1 {
				return found[0]
			}
		}
	}
	t.Fatalf("%s has no cgroup of its own in the %s hierarchy", host, controller)
	return ""
}

// readTrim reads a small file, trimmed.
func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// assertInHostCgroups checks that each pid is in the host's own cgroup in
// every v1 hierarchy (below cargoship-fleet/<netns>, not at this
// machine's root), and in dir's in the memory one.
func assertInHostCgroups(t *testing.T, fleet, host string, pids []int, memDir string) {
	t.Helper()
	if len(pids) == 0 {
		t.Fatalf("no process in %s", memDir)
	}
	own := "/" + cgroupParent + "/" + netnsName(fleet, host) + "/"
	memRel := memDir[strings.Index(memDir, own):]
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.SplitN(line, ":", 3)
			if len(f) != 3 || f[1] == "" {
				continue // cgroup2: the host's payload, as every host's
			}
			if !strings.Contains(f[2]+"/", own) {
				t.Errorf("pid %d is outside %s's cgroup in %s: %s", pid, host, f[1], f[2])
			}
			if f[1] == "memory" && !strings.HasSuffix(f[2], memRel) {
				t.Errorf("pid %d's memory cgroup is %s, want ...%s", pid, f[2], memRel)
			}
		}
	}
}

// cgroupPidsOf lists the processes in one cgroup (not below it).
func cgroupPidsOf(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	for _, s := range strings.Fields(readTrim(t, filepath.Join(dir, "cgroup.procs"))) {
		if n, err := strconv.Atoi(s); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// fleetPids lists every process in a fleet's cgroups.
func fleetPids(fleet string) []int {
	var pids []int
	for _, d := range fleetCgroups(fleet) {
		pids = append(pids, cgroupPids(d)...)
	}
	return pids
}

// downLeavesNothing takes a fleet down and checks that nothing of it is
// left (assertNothingLeft), nor any process its cgroups held before: a
// NodeRuntime host's containers run there, not under nspawn.
func downLeavesNothing(t *testing.T, c *Container, name, dir string) {
	t.Helper()
	pids := fleetPids(name)
	if err := c.Down(context.Background(), name); err != nil {
		t.Fatalf("Down: %v", err)
	}
	assertNothingLeft(t, c, name, dir)
	for _, pid := range pids {
		if backend.Alive(pid) {
			t.Errorf("pid %d of the fleet runs after Down", pid)
		}
	}
}
