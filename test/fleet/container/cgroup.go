package container

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Every host runs in its own cgroup. systemd-nspawn with --keep-unit puts
// the container under the cgroup nspawn was started in (in payload/ and
// supervisor/ sub-cgroups), so hosts started from one shell would all share
// one cgroup tree - and their systemds would create, kill and remove each
// other's unit cgroups. That showed up as units failing at random with
// 219/CGROUP ("Failed to attach to cgroup ...: No such file or directory"),
// "Failed to kill control group: Input/output error", and user@.service
// stops that hung until their timeout. The supervisor loop therefore moves
// itself into <hierarchy>/cargoship-fleet/<netns>/ before starting nspawn.
const cgroupParent = "cargoship-fleet"

// hierarchy is one mounted cgroup hierarchy.
type hierarchy struct {
	point string // mount point
	root  string // the part of the hierarchy mounted there
	// opts are the super options: a v1 hierarchy's controllers
	// ("memory", "cpu,cpuacct", "name=systemd") are among them.
	opts string
	v2   bool
}

// tracking reports whether nspawn and the hosts' systemd track processes
// in h: the cgroup2 hierarchy, and v1 name=systemd on a hybrid machine like
// this one. Every host has a cgroup of its own in these.
func (h hierarchy) tracking() bool { return h.v2 || hasOption(h.opts, "name=systemd") }

// hierarchies returns every mounted cgroup hierarchy, by mount point.
func hierarchies() []hierarchy {
	ms, _ := readMounts()
	var out []hierarchy
	for _, m := range ms {
		if m.FSType == "cgroup2" || m.FSType == "cgroup" {
			out = append(out, hierarchy{point: m.Point, root: m.Root, opts: m.Options, v2: m.FSType == "cgroup2"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].point < out[j].point })
	return out
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// hostCgroupDir is where a host's cgroup goes in h, "" for none. In the
// tracking hierarchies it is <mount>/cargoship-fleet/<netns>. In the v1
// controller hierarchies, which only a NodeRuntime host joins, it is under
// the cgroup this process runs in there: whatever started it (a CI runner,
// a session's supervisor) accounts and limits what it starts in those, and
// a host stays inside that, as it does when it does not join them at all.
func hostCgroupDir(h hierarchy, netns string, node bool) string {
	switch {
	case h.tracking():
		return filepath.Join(h.point, cgroupParent, netns)
	case node && !h.v2:
		// PowerOn from another process keeps the host where it was.
		if found := findCgroupsIn(h, netns); len(found) > 0 {
			return found[0]
		}
		return filepath.Join(ownCgroupDir(h), cgroupParent, netns)
	}
	return ""
}

// ownCgroupDir is the directory of this process's cgroup in a v1
// hierarchy.
func ownCgroupDir(h hierarchy) string {
	b, _ := os.ReadFile("/proc/self/cgroup")
	return cgroupDirIn(h, string(b))
}

// cgroupDirIn finds, in /proc/<pid>/cgroup's content, the process's cgroup
// in v1 hierarchy h and maps it through the mount's root; the mount point
// when that cgroup is not visible through the mount.
func cgroupDirIn(h hierarchy, procCgroup string) string {
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		mine := true
		for _, c := range strings.Split(f[1], ",") {
			mine = mine && hasOption(h.opts, c)
		}
		if !mine {
			continue
		}
		rel, ok := strings.CutPrefix(f[2], strings.TrimSuffix(h.root, "/"))
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			return h.point
		}
		return filepath.Join(h.point, rel)
	}
	return h.point
}

// createHostCgroups makes a host's cgroups and returns their cgroup.procs
// files, for the supervisor loop to move itself into: in the tracking
// hierarchies, and with node (Spec.NodeRuntime) in every v1 hierarchy too,
// so that the cgroup namespace nspawn gives the host is rooted at the
// host's own cgroup in each of them (see noderuntime.go).
func createHostCgroups(host, netns string, node bool) ([]string, error) {
	var procs []string
	for _, h := range hierarchies() {
		dir := hostCgroupDir(h, netns, node)
		if dir == "" {
			continue
		}
		if err := mkdirCgroup(h, dir); err != nil {
			return nil, fmt.Errorf("%s: cgroup: %w", host, err)
		}
		procs = append(procs, filepath.Join(dir, "cgroup.procs"))
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("%s: no cgroup2 or name=systemd hierarchy is mounted", host)
	}
	return procs, nil
}

// mkdirCgroup makes dir and its missing parents. A new v1 cpuset cgroup
// starts with no CPUs and no memory nodes, and joining it fails with
// ENOSPC, so each level without them gets its parent's. That is checked
// for a level that exists too: hosts come up in parallel, and one that
// finds the shared parent another has just made may find it still empty
// (CI saw a host's every join fail so, "No space left on device").
func mkdirCgroup(h hierarchy, dir string) error {
	if dir == h.point {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != h.point && !strings.HasPrefix(parent, h.point+"/") {
		return fmt.Errorf("%s is outside the hierarchy at %s", dir, h.point)
	}
	cpuset := !h.v2 && hasOption(h.opts, "cpuset")
	if fileExists(dir) && (!cpuset || cpusetFilled(dir)) {
		return nil
	}
	if err := mkdirCgroup(h, parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if !cpuset {
		return nil
	}
	for _, f := range cpusetFiles {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && len(bytes.TrimSpace(b)) > 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
		}
	}
	return nil
}

// cpusetFiles are what a v1 cpuset cgroup must hold before a process
// may join it.
var cpusetFiles = []string{"cpuset.cpus", "cpuset.mems"}

// cpusetFilled says dir's cpuset has CPUs and memory nodes.
func cpusetFilled(dir string) bool {
	for _, f := range cpusetFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return false
		}
	}
	return true
}

// findDepth bounds the search for cargoship-fleet dirs below a mount
// point: the v1 ones sit under the cgroup of whatever started the fleet.
const findDepth = 6

// findCgroups lists the host cgroups whose names match pattern (a glob of
// netns names), in every hierarchy, wherever their cargoship-fleet parent
// is: Down and the leftovers check find them by name, not from the state.
func findCgroups(pattern string) []string {
	var out []string
	for _, h := range hierarchies() {
		out = append(out, findCgroupsIn(h, pattern)...)
	}
	return out
}

// findCgroupsIn is findCgroups in one hierarchy.
func findCgroupsIn(h hierarchy, pattern string) []string {
	var out []string
	_ = filepath.WalkDir(h.point, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == cgroupParent {
			ds, _ := filepath.Glob(filepath.Join(p, pattern))
			out = append(out, ds...)
			return filepath.SkipDir
		}
		if strings.Count(strings.TrimPrefix(p, h.point), "/") >= findDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// fleetCgroups lists the per-host cgroup dirs of a fleet, in every hierarchy.
func fleetCgroups(fleet string) []string { return findCgroups(netnsPrefix(fleet) + "*") }

// cgroupPids returns every process in a cgroup tree.
func cgroupPids(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// killCgroups kills every process left in the fleet's cgroups: with
// cgroup.kill where the kernel has it (cgroup2), which also catches
// processes forked while killing, else one by one.
func killCgroups(fleet string) {
	var all []int
	for _, dir := range fleetCgroups(fleet) {
		pids := cgroupPids(dir)
		if len(pids) == 0 {
			continue
		}
		all = append(all, pids...)
		if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) != nil {
			killAll(pids)
		}
	}
	backend.WaitGone(all, 5*time.Second)
}

// removeCgroups removes the fleet's (now empty) cgroups, deepest first, and
// the cargoship-fleet parent once no fleet uses it.
func removeCgroups(fleet string) error {
	var errs []error
	found := fleetCgroups(fleet)
	for _, dir := range found {
		var dirs []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			// A cgroup can take a moment to be released after its last
			// process is reaped; rmdir says EBUSY until then.
			var err error
			for try := 0; try < 20; try++ {
				if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
					err = nil
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
				break
			}
		}
	}
	parents := map[string]bool{}
	for _, dir := range found {
		parents[filepath.Dir(dir)] = true
	}
	for _, h := range hierarchies() {
		if h.tracking() {
			parents[filepath.Join(h.point, cgroupParent)] = true
		}
	}
	for p := range parents {
		_ = os.Remove(p) // only if empty: other fleets may use it
	}
	return errors.Join(errs...)
}
