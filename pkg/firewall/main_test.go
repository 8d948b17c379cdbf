package firewall

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/os/ostest"
)

// TestMain lets the test binary stand in for firewall-cmd and ufw: a
// symlink named after the tool runs the fake below with its state in a
// JSON file, so the front ends' scripts run in a real shell against a
// daemon that keeps permanent and runtime configuration apart.
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "firewall-cmd":
		os.Exit(runFake(func(st *fakeState) int { return st.Firewalld.run(os.Args[1:]) }))
	case "ufw":
		os.Exit(runFake(func(st *fakeState) int { return st.UFW.run(os.Args[1:]) }))
	}
	os.Exit(m.Run())
}

type fakeState struct {
	Firewalld *fakeFirewalld `json:",omitempty"`
	UFW       *fakeUFW       `json:",omitempty"`
	Calls     [][]string
}

func runFake(run func(*fakeState) int) int {
	path := os.Getenv("FAKE_FIREWALL_STATE")
	st := &fakeState{}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, st)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake: state:", err)
		return 99
	}
	st.Calls = append(st.Calls, append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...))
	code := run(st)
	b, _ = json.MarshalIndent(st, "", " ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fake: state:", err)
		return 99
	}
	return code
}

// fakeHost is a Local runner whose PATH finds the fake tools first.
type fakeHost struct {
	*ostest.Local
	state string
}

func newFakeHost(t *testing.T, st *fakeState) *fakeHost {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"firewall-cmd", "ufw"} {
		if err := os.Symlink(exe, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	h := &fakeHost{state: filepath.Join(dir, "state.json")}
	h.save(t, st)
	h.Local = &ostest.Local{Env: []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "FAKE_FIREWALL_STATE=" + h.state}}
	return h
}

func (h *fakeHost) save(t *testing.T, st *fakeState) {
	t.Helper()
	b, _ := json.Marshal(st)
	if err := os.WriteFile(h.state, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHost) load(t *testing.T) *fakeState {
	t.Helper()
	b, err := os.ReadFile(h.state)
	if err != nil {
		t.Fatal(err)
	}
	st := &fakeState{}
	if err := json.Unmarshal(b, st); err != nil {
		t.Fatal(err)
	}
	return st
}
