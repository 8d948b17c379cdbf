package container

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// A NodeRuntime host's nspawn line is the plain one without --boot, with
// the node's additions and nodeInit as the command; nspawn is left to pick
// the machine's hybrid layout and installs no seccomp filter.
func TestNodeNspawn(t *testing.T) {
	p := pathsFor("/f", "kc0")
	plain := nspawnArgs(p, "cs-dev-kc0", fleet.Host{Name: "kc0"})
	env := []string{"PATH=/bin", "SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1", "CARGOSHIP_FLEET_CGROUPS=x"}
	args, nenv := nodeNspawn(p, plain, env)
	if slices.Contains(args, "--boot") {
		t.Errorf("--boot kept: %v", args)
	}
	for _, a := range plain {
		if a != "--boot" && !slices.Contains(args, a) {
			t.Errorf("lost %s: %v", a, args)
		}
	}
	for _, want := range []string{
		"--capability=all", "--kill-signal=SIGRTMIN+3", "--bind=/dev/kmsg",
		"--bind=/f/hosts/kc0/node/containerd:/var/lib/containerd",
		"--bind=/f/hosts/kc0/node/kubelet:/var/lib/kubelet",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("lacks %s: %v", want, args)
		}
	}
	if last := args[len(args)-1]; last != "/"+nodeInitPath {
		t.Errorf("the command is %s, want /%s", last, nodeInitPath)
	}
	if got := strings.Join(nenv, " "); got != "PATH=/bin CARGOSHIP_FLEET_CGROUPS=x SYSTEMD_SECCOMP=0" {
		t.Errorf("env = %s", got)
	}
	if strings.Join(plain, " ") != strings.Join(nspawnArgs(p, "cs-dev-kc0", fleet.Host{Name: "kc0"}), " ") {
		t.Error("nodeNspawn changed the plain line it was given")
	}
}

// A host's v1 cgroup sits under the cgroup of whoever started the fleet,
// mapped through the mount's root.
func TestCgroupDirIn(t *testing.T) {
	procs := "4:memory:/process_api/abc\n2:cpu,cpuacct:/\n1:name=systemd:/\n0::/\n"
	for _, c := range []struct {
		h    hierarchy
		want string
	}{
		{hierarchy{point: "/sys/fs/cgroup/memory", root: "/", opts: "rw,memory"}, "/sys/fs/cgroup/memory/process_api/abc"},
		{hierarchy{point: "/sys/fs/cgroup/cpu,cpuacct", root: "/", opts: "rw,cpu,cpuacct"}, "/sys/fs/cgroup/cpu,cpuacct"},
		// a container's view: the mount shows only /process_api
		{hierarchy{point: "/m", root: "/process_api", opts: "rw,memory"}, "/m/abc"},
		// a cgroup the mount does not show
		{hierarchy{point: "/m", root: "/other", opts: "rw,memory"}, "/m"},
		{hierarchy{point: "/m", root: "/process_ap", opts: "rw,memory"}, "/m"},
		{hierarchy{point: "/sys/fs/cgroup/pids", root: "/", opts: "rw,pids"}, "/sys/fs/cgroup/pids"},
	} {
		if got := cgroupDirIn(c.h, procs); got != c.want {
			t.Errorf("%+v: %s, want %s", c.h, got, c.want)
		}
	}
	if d := hostCgroupDir(hierarchy{point: "/sys/fs/cgroup/unified", v2: true}, "cs-dev-kc0", false); d != "/sys/fs/cgroup/unified/cargoship-fleet/cs-dev-kc0" {
		t.Errorf("cgroup2: %s", d)
	}
	if d := hostCgroupDir(hierarchy{point: "/sys/fs/cgroup/memory", opts: "rw,memory"}, "cs-dev-kc0", false); d != "" {
		t.Errorf("a plain host joins the memory hierarchy: %s", d)
	}
}

// NodeRuntime hosts are estimated with containerd and kubelet in them.
func TestCheckMemoryNodeRuntime(t *testing.T) {
	avail := memBaseMiB + memReserveMiB
	if err := checkMemory(fleet.Spec{Name: "dev", Image: ImageBase}, 1, avail); err != nil {
		t.Fatal(err)
	}
	if err := checkMemory(fleet.Spec{Name: "dev", Image: ImageBase, NodeRuntime: true}, 1, avail); err == nil {
		t.Error("a NodeRuntime host fit where only a plain one does")
	}
}
