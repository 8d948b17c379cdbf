package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// A NodeRuntime host (Spec.NodeRuntime) is set up the way kind sets up its
// node containers, so containerd, runc and a real kubelet run in it; what
// each piece is for, and the errors seen without it, are in
// docs/reference/nested-kubelet.md. In short:
//
//   - The supervisor joins a cgroup of its own in every v1 hierarchy
//     (createHostCgroups), and nspawn runs the host in this machine's
//     hybrid layout (v1 controllers, cgroup2 for systemd's tracking) and
//     in a cgroup namespace, so each hierarchy the host mounts is rooted at
//     the host's own cgroup: runc's and kubelet's cgroups land below it,
//     and Down removes them with it.
//   - nspawn mounts the controllers read-only and leaves / private;
//     nodeInit, run as PID 1 before systemd, remounts them writable, gives
//     kubelet the six machine-wide sysctls it insists on as files of the
//     host's own, and makes / shared.
//   - All capabilities and no seccomp filter (runc needs keyctl, mount,
//     pivot_root and more), and /dev/kmsg for kubelet's OOM watcher; the
//     host's journald does not read this machine's kernel log from it.
//   - /var/lib/containerd and /var/lib/kubelet are directories on this
//     machine's filesystem: containerd's overlayfs snapshotter cannot use
//     an overlayfs (the host's root) as its upper layer.
const (
	nodeInitPath = "usr/local/sbin/cargoship-node-init"
	nodeDir      = "node" // hosts/<host>/node: the bind-mounted state
	// a journald drop-in: ReadKMsg=no
	journaldNoKmsgPath = "etc/systemd/journald.conf.d/cargoship-node.conf"
)

// nodeBinds are the host directories kept on this machine's filesystem.
var nodeBinds = []string{"/var/lib/containerd", "/var/lib/kubelet"}

// nodeInit is the PID 1 of a NodeRuntime host. It becomes systemd once the
// mounts are fixed, so the host boots as any other.
const nodeInit = `#!/bin/sh
# PID 1 of a cargoship fleet host with NodeRuntime (written by test/fleet):
# makes what systemd-nspawn set up fit containerd and kubelet, then becomes
# systemd. See docs/reference/nested-kubelet.md.
set -eu
# nspawn mounts the v1 controllers read-only; runc and kubelet make cgroups
# in them. The cgroup namespace roots each at this host's own cgroup.
points=$(while read -r _ _ _ _ point _ rest; do
	case " $rest " in *" - cgroup "*) echo "$point" ;; esac
done </proc/self/mountinfo)
for p in $points; do
	mount -o remount,bind,rw,nosuid,nodev,noexec "$p"
done
# kubelet sets six sysctls at start and fails if it cannot, but they are
# the machine's, not namespaced (kernel.panic_on_oops=1 would reach every
# process on it). Each gets a file of the host's own, bound over it and
# holding kubelet's value: kubelet finds what it wants, and a write lands
# in the file. The rest of /proc/sys stays as nspawn made it.
mkdir -p /run/cargoship-node/sysctl
while read -r key value; do
	f=/run/cargoship-node/sysctl/$(echo "$key" | tr / .)
	echo "$value" >"$f"
	mount --bind "$f" "/proc/sys/$key"
done <<EOF
vm/overcommit_memory 1
vm/panic_on_oom 0
kernel/panic 10
kernel/panic_on_oops 1
kernel/keys/root_maxkeys 1000000
kernel/keys/root_maxbytes 25000000
EOF
# kubelet's volumes and mountPropagation need shared mounts. Nothing leaks
# out: nspawn made the machine's side of this namespace a slave.
mount --make-rshared /
exec /lib/systemd/systemd "$@"
`

// nodeNspawn turns a host's nspawn command line and environment into the
// NodeRuntime one: nodeInit instead of --boot's own pick of init (the
// kill signal --boot would imply is given), all capabilities, /dev/kmsg,
// the state binds, the hybrid cgroup layout and no seccomp filter.
func nodeNspawn(p hostPaths, args, env []string) ([]string, []string) {
	var out []string
	for _, a := range args {
		if a != "--boot" {
			out = append(out, a)
		}
	}
	out = append(out, "--capability=all", "--kill-signal=SIGRTMIN+3", "--bind=/dev/kmsg")
	for _, b := range nodeBinds {
		out = append(out, "--bind="+filepath.Join(p.node, filepath.Base(b))+":"+b)
	}
	out = append(out, "/"+nodeInitPath)
	var envOut []string
	for _, e := range env {
		// Unset, nspawn gives the host this machine's hybrid layout: the
		// v1 controllers, and cgroup2 for systemd to track its units in.
		if !strings.HasPrefix(e, "SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=") {
			envOut = append(envOut, e)
		}
	}
	// systemd's switch for every seccomp filter it would install
	envOut = append(envOut, "SYSTEMD_SECCOMP=0")
	return out, envOut
}

// overlayfsMagic is statfs's f_type for overlayfs.
const overlayfsMagic = 0x794c7630

// nodeRuntimeCheck refuses NodeRuntime where it cannot work: with no v1
// controller hierarchy (a cgroup2-only machine would need its controllers
// delegated down to each host, which is not built), or with the state dir
// on overlayfs.
func nodeRuntimeCheck(stateDir string) error {
	v1 := false
	for _, h := range hierarchies() {
		v1 = v1 || (!h.v2 && !h.tracking())
	}
	if !v1 {
		return errors.New("NodeRuntime: this machine mounts no cgroup v1 controller hierarchy; the option is built for machines whose controllers are on v1 (hybrid or legacy layout), not yet for cgroup2-only ones")
	}
	dir := stateDir
	for !fileExists(dir) && dir != filepath.Dir(dir) {
		dir = filepath.Dir(dir)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("NodeRuntime: statfs %s: %w", dir, err)
	}
	if fs.Type == overlayfsMagic {
		return fmt.Errorf("NodeRuntime: the fleet state dir %s is on overlayfs, which containerd's overlayfs snapshotter cannot use as its upper layer; set CARGOSHIP_FLEET_DIR to a directory on another filesystem", stateDir)
	}
	return nil
}

// prepareNode writes nodeInit into a host and makes its state dirs.
func prepareNode(p hostPaths, h fleet.Host) error {
	for _, b := range nodeBinds {
		if err := os.MkdirAll(filepath.Join(p.node, filepath.Base(b)), 0o755); err != nil {
			return fmt.Errorf("%s: node state: %w", h.Name, err)
		}
	}
	if err := writeFileMode(filepath.Join(p.merged, nodeInitPath), nodeInit, 0o755); err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	// /dev/kmsg is this machine's kernel log: kept out of the host's journal
	if err := writeFileMode(filepath.Join(p.merged, journaldNoKmsgPath), "[Journal]\nReadKMsg=no\n", 0o644); err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	return nil
}
