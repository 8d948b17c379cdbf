package backend

import (
	"errors"
	"os"
	"sort"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// FleetDirs names the directories of stateDir, one a fleet; none when
// stateDir does not exist yet (no fleet was ever brought up).
func FleetDirs(stateDir string) ([]string, error) {
	entries, err := os.ReadDir(stateDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Status is what List reports of a fleet recorded in dir: a host runs
// while the pid in its pid file is alive, and one that does not is a
// problem.
func Status(name, backend, dir string, hosts []fleet.Host, pidFile func(host string) string) fleet.Status {
	s := fleet.Status{Name: name, Backend: backend, Dir: dir}
	for _, h := range hosts {
		hs := fleet.HostStatus{Host: h, State: "stopped"}
		if pid := ReadPid(pidFile(h.Name)); Alive(pid) {
			hs.State, hs.PID = "running", pid
		} else {
			s.Problems = append(s.Problems, h.Name+" is not running")
		}
		s.Hosts = append(s.Hosts, hs)
	}
	return s
}

// SortByName puts statuses in the order List returns them.
func SortByName(statuses []fleet.Status) {
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].Name < statuses[j].Name })
}
