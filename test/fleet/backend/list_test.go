package backend

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

func TestFleetDirs(t *testing.T) {
	if names, err := FleetDirs(filepath.Join(t.TempDir(), "none")); err != nil || names != nil {
		t.Errorf("FleetDirs of no state dir = %v, %v; want none", names, err)
	}
	dir := t.TempDir()
	for _, d := range []string{"dev", "e2e"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if names, err := FleetDirs(dir); err != nil || !reflect.DeepEqual(names, []string{"dev", "e2e"}) {
		t.Errorf("FleetDirs = %v, %v; want the directories only", names, err)
	}
}

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	pidFile := func(host string) string { return filepath.Join(dir, host+".pid") }
	if err := os.WriteFile(pidFile("kc0"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Status("dev", "test", dir, []fleet.Host{{Name: "kc0"}, {Name: "kw0"}}, pidFile)
	if s.Name != "dev" || s.Backend != "test" || s.Dir != dir || len(s.Hosts) != 2 {
		t.Fatalf("Status = %+v", s)
	}
	if h := s.Hosts[0]; h.State != "running" || h.PID != os.Getpid() {
		t.Errorf("kc0, its pid alive: %+v, want running", h)
	}
	if h := s.Hosts[1]; h.State != "stopped" || h.PID != 0 {
		t.Errorf("kw0, no pid file: %+v, want stopped", h)
	}
	if !reflect.DeepEqual(s.Problems, []string{"kw0 is not running"}) {
		t.Errorf("problems = %v", s.Problems)
	}
}

func TestSortByName(t *testing.T) {
	s := []fleet.Status{{Name: "e2e"}, {Name: "dev"}, {Name: "faults"}}
	SortByName(s)
	if s[0].Name != "dev" || s[1].Name != "e2e" || s[2].Name != "faults" {
		t.Errorf("SortByName = %v", s)
	}
}
