package firewall

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// TestMain lets the test binary stand in for firewall-cmd and ufw: run
// under the tool's name it runs the fake below with its state in a JSON
// file, so the front ends' scripts run in a real shell against a daemon
// that keeps permanent and runtime configuration apart.
func TestMain(m *testing.M) {
	hosttest.ServeTools(map[string]func([]string) int{
		"firewall-cmd": func(args []string) int {
			return runFake("firewall-cmd", args, func(st *fakeState) int { return st.Firewalld.run(args) })
		},
		"ufw": func(args []string) int {
			return runFake("ufw", args, func(st *fakeState) int { return st.UFW.run(args) })
		},
		"nft": fakeNFT,
	})
	os.Exit(m.Run())
}

type fakeState struct {
	Firewalld *fakeFirewalld `json:",omitempty"`
	UFW       *fakeUFW       `json:",omitempty"`
	Calls     [][]string
}

func runFake(tool string, args []string, run func(*fakeState) int) int {
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
	st.Calls = append(st.Calls, append([]string{tool}, args...))
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
	*hosttest.Local
	state string
}

func newFakeHost(t *testing.T, st *fakeState) *fakeHost {
	t.Helper()
	h := &fakeHost{Local: hosttest.Tools(t, "firewall-cmd", "ufw"), state: filepath.Join(t.TempDir(), "state.json")}
	h.Env = append(h.Env, "FAKE_FIREWALL_STATE="+h.state)
	h.save(t, st)
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

// fakeNFT answers the reads detection makes, as nft does on a host whose
// only table, inet admin, drops input by default (and never loads ours).
func fakeNFT(args []string) int {
	switch strings.Join(args, " ") {
	case "list tables":
		fmt.Println("table inet admin")
		return 0
	case "list chains":
		fmt.Print("table inet admin {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\t}\n}\n")
		return 0
	}
	fmt.Fprintf(os.Stderr, "Error: No such file or directory\n")
	return 1
}
