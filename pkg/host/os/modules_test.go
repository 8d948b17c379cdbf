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

// TestModulesPlanFromCapturedOutput: module states from captured output,
// the modules-load.d file (not there yet) real.
func TestModulesPlanFromCapturedOutput(t *testing.T) {
	f := (&hosttest.Fake{Else: &hosttest.Local{}}).
		On("/sys/module", "br_netfilter absent\noverlay builtin\n")
	path := filepath.Join(t.TempDir(), "cargoship.conf")
	c, err := Modules{Path: path}.Plan(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"write " + path, "load module br_netfilter"}
	if strings.Join(c.Actions, "|") != strings.Join(want, "|") {
		t.Errorf("actions = %q, want %q", c.Actions, want)
	}
	if _, err := (Modules{Names: []string{"x;reboot"}}).Plan(context.Background(), f); err == nil {
		t.Error("a bad module name should be refused")
	}
}

// TestModulesLocal runs against this machine: overlay is loaded here (it
// must be, for containers), and a module that does not exist cannot be
// loaded whatever modprobe there is. Twice: the second run writes nothing.
func TestModulesLocal(t *testing.T) {
	if _, err := os.Stat("/sys/module/overlay"); err != nil {
		t.Skip("overlay is not loaded on this machine")
	}
	ctx := context.Background()
	r := &hosttest.Local{}
	path := filepath.Join(t.TempDir(), "modules-load.d", "cargoship.conf")
	step := Modules{Names: []string{"overlay", "cargoship_no_such_module", "overlay"}, Path: path}
	for run := 1; run <= 2; run++ {
		c, err := step.Apply(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		wantActions := 1
		if run == 2 {
			wantActions = 0
		}
		if len(c.Actions) != wantActions || len(c.Failed) != 1 || c.Failed[0].Item != "cargoship_no_such_module" {
			t.Errorf("run %d: %+v", run, c)
		}
	}
	if b, _ := os.ReadFile(path); !strings.HasSuffix(string(b), "\noverlay\ncargoship_no_such_module\n") {
		t.Errorf("file = %q", b)
	}
}

// net.netfilter.* keys exist only with nf_conntrack loaded: setting one
// adds the module to modules-load.d, for boot; other keys do not.
func TestModulesForNetfilterSysctl(t *testing.T) {
	if got := ModulesFor(map[string]string{"net.netfilter.nf_conntrack_max": "1000000"}); !slices.Contains(got, "nf_conntrack") {
		t.Errorf("ModulesFor(net.netfilter.*) = %q", got)
	}
	if got := ModulesFor(map[string]string{"net/netfilter/nf_conntrack_buckets": "250000"}); !slices.Contains(got, "nf_conntrack") {
		t.Errorf("ModulesFor(net/netfilter/*) = %q", got)
	}
	if got := ModulesFor(map[string]string{"net.ipv4.ip_forward": "1"}); slices.Contains(got, "nf_conntrack") || !slices.Equal(got, DefaultModules) {
		t.Errorf("ModulesFor(ip_forward) = %q", got)
	}
	if got := string(RenderModules(ModulesFor(map[string]string{"net.netfilter.nf_conntrack_max": "1"}))); !strings.HasSuffix(got, "\nnf_conntrack\n") {
		t.Errorf("modules-load.d = %q", got)
	}
}
