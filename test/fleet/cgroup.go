package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
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

// cgroupRoots returns the mount points of the hierarchies nspawn and the
// hosts' systemd track processes in: the cgroup2 one, and the v1
// name=systemd one on a hybrid machine like this one.
func cgroupRoots() []string {
	ms, _ := readMounts()
	var roots []string
	for _, m := range ms {
		if m.FSType == "cgroup2" || (m.FSType == "cgroup" && hasOption(m.Options, "name=systemd")) {
			roots = append(roots, m.Point)
		}
	}
	sort.Strings(roots)
	return roots
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// createHostCgroups makes a host's cgroups and returns their cgroup.procs
// files, for the supervisor loop to move itself into.
func createHostCgroups(host, netns string) ([]string, error) {
	var procs []string
	for _, root := range cgroupRoots() {
		dir := filepath.Join(root, cgroupParent, netns)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: cgroup: %w", host, err)
		}
		procs = append(procs, filepath.Join(dir, "cgroup.procs"))
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("%s: no cgroup2 or name=systemd hierarchy is mounted", host)
	}
	return procs, nil
}

// fleetCgroups lists the per-host cgroup dirs of a fleet, in every hierarchy.
func fleetCgroups(fleet string) []string {
	var out []string
	for _, root := range cgroupRoots() {
		ds, _ := filepath.Glob(filepath.Join(root, cgroupParent, netnsPrefix(fleet)+"*"))
		out = append(out, ds...)
	}
	return out
}

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
	waitGone(all, 5*time.Second)
}

// removeCgroups removes the fleet's (now empty) cgroups, deepest first, and
// the cargoship-fleet parent once no fleet uses it.
func removeCgroups(fleet string) error {
	var errs []error
	for _, dir := range fleetCgroups(fleet) {
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
	for _, root := range cgroupRoots() {
		_ = os.Remove(filepath.Join(root, cgroupParent)) // only if empty
	}
	return errors.Join(errs...)
}
