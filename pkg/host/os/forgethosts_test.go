package hostos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// without returns nodes less the entries at idx.
func without(entries []HostsEntry, idx ...int) []HostsEntry {
	var out []HostsEntry
	for i, en := range entries {
		if !slices.Contains(idx, i) {
			out = append(out, en)
		}
	}
	return out
}

// rendered is body with the managed block EtcHosts writes for entries.
func rendered(t *testing.T, body string, entries []HostsEntry) string {
	t.Helper()
	block, _, err := RenderHostsBlock(entries)
	if err != nil {
		t.Fatal(err)
	}
	out, err := UpdateHostsFile([]byte(body), block)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestForgetHostsBlockIsRenderOfTheRest: forgetting a node leaves exactly
// the file EtcHosts writes for the inventory without it, the admin's
// lines before and after the block included.
func TestForgetHostsBlockIsRenderOfTheRest(t *testing.T) {
	const tail = "192.168.1.1 router\n"
	full := rendered(t, debianHosts, nodes) + tail
	for _, c := range []struct {
		name   string
		addrs  []string
		remain []HostsEntry
		gone   int
	}{
		{"one node", []string{"10.73.0.11"}, without(nodes, 0), 1},
		{"a dual-stack node goes with its IPv6 line", []string{"10.73.0.10"}, without(nodes, 1, 3), 2},
		{"IPv4-mapped spelling, and an empty address ignored", []string{"::ffff:10.73.0.12", ""}, without(nodes, 4), 1},
		{"every node: no block left", []string{"10.73.0.10", "10.73.0.11", "10.73.0.12"}, nil, 4},
	} {
		got, dropped, err := ForgetHostsBlock([]byte(full), c.addrs)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := rendered(t, debianHosts, c.remain) + tail
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, want)
		}
		if len(dropped) != c.gone {
			t.Errorf("%s: dropped %+v", c.name, dropped)
		}
	}
	for _, same := range [][]string{{"10.99.0.1"}, nil, {""}} {
		if got, dropped, err := ForgetHostsBlock([]byte(full), same); err != nil || string(got) != full || len(dropped) != 0 {
			t.Errorf("forgetting %q changed the file: %v %+v", same, err, dropped)
		}
	}
	if got, _, err := ForgetHostsBlock([]byte(debianHosts), []string{"10.73.0.11"}); err != nil || string(got) != debianHosts {
		t.Errorf("no block: %v\n%s", err, got)
	}
}

func TestForgetHostsBlockRefuses(t *testing.T) {
	full := rendered(t, debianHosts, nodes)
	if _, _, err := ForgetHostsBlock([]byte(full), []string{"kw0"}); err == nil {
		t.Error("a name is not an address")
	}
	if _, _, err := ForgetHostsBlock([]byte(debianHosts+HostsBegin+"\n10.73.0.11 kw0\n"), []string{"10.73.0.11"}); err == nil {
		t.Error("a block without its end marker")
	}
	junk := strings.Replace(full, "10.73.0.12 kw2\n", "10.73.0.12 kw2\nnot-an-address kw9\n", 1)
	if _, _, err := ForgetHostsBlock([]byte(junk), []string{"10.73.0.11"}); err == nil || !strings.Contains(err.Error(), "not-an-address") {
		t.Errorf("a line RenderHostsBlock never writes: %v", err)
	}
}

// TestForgetHostsStepLocal runs the step through a real shell on a copy of
// a hosts file EtcHosts wrote: Plan writes nothing, Apply leaves what
// EtcHosts writes for the other nodes (so EtcHosts then has nothing to
// do), and a second Apply does nothing.
func TestForgetHostsStepLocal(t *testing.T) {
	ctx := context.Background()
	r := &hosttest.Local{}
	dir := t.TempDir()
	path := filepath.Join(dir, "hosts")
	if err := os.WriteFile(path, []byte(debianHosts), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := (EtcHosts{Entries: nodes, Path: path}).Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	step := ForgetHosts{Addresses: []string{"10.73.0.12"}, Path: path}
	plan, err := step.Plan(ctx, r)
	if err != nil || len(plan.Actions) != 1 || !strings.Contains(plan.Actions[0], "10.73.0.12 (kw2)") {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(before) {
		t.Fatal("Plan wrote the file")
	}
	if c, err := step.Apply(ctx, r); err != nil || len(c.Actions) != 1 {
		t.Fatalf("apply = %+v %v", c, err)
	}
	rest := EtcHosts{Entries: without(nodes, 4), Path: path}
	if c, err := rest.Plan(ctx, r); err != nil || c.Changed() {
		t.Errorf("EtcHosts for the remaining nodes after forgetting: %+v %v", c, err)
	}
	if b, _ := os.ReadFile(path); string(b) != rendered(t, debianHosts, without(nodes, 4)) {
		t.Errorf("file:\n%s", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", st.Mode())
	}
	if c, err := step.Apply(ctx, r); err != nil || c.Changed() {
		t.Errorf("second apply = %+v %v", c, err)
	}
	missing := ForgetHosts{Addresses: []string{"10.73.0.12"}, Path: filepath.Join(dir, "none")}
	if c, err := missing.Apply(ctx, r); err != nil || c.Changed() {
		t.Errorf("no hosts file: %+v %v", c, err)
	}
}
