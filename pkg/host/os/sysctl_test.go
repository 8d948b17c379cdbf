package hostos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

func TestRenderSysctlSorted(t *testing.T) {
	got := string(RenderSysctl(map[string]string{
		"vm.max_map_count":            "262144",
		"fs.inotify.max_user_watches": "11048576",
		"net.ipv4.ping_group_range":   " 0 2147483647 ",
		"kernel.panic":                "10",
	}))
	want := "# Written by cargoship; changes here are overwritten on the next apply.\n" +
		"fs.inotify.max_user_watches = 11048576\n" +
		"kernel.panic = 10\n" +
		"net.ipv4.ping_group_range = 0 2147483647\n" +
		"vm.max_map_count = 262144\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSysctlRejectsBadInput(t *testing.T) {
	for _, v := range []map[string]string{{"a;reboot": "1"}, {"net.ipv4.ip_forward": "1\nkernel.panic = 0"}} {
		if _, err := (Sysctl{Values: v}).Plan(context.Background(), &hosttest.Fake{}); err == nil {
			t.Errorf("%q should be refused", v)
		}
	}
}

// TestSysctlPlanFromCapturedOutput: the plan names only differing keys,
// compares multi-value keys field by field and reports unknown keys.
func TestSysctlPlanFromCapturedOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "90-cargoship.conf")
	values := map[string]string{"net.ipv4.ip_forward": "1", "net.ipv4.ping_group_range": "0 2147483647", "net.bridge.bridge-nf-call-iptables": "1"}
	if err := os.WriteFile(path, RenderSysctl(values), 0o644); err != nil {
		t.Fatal(err)
	}
	f := (&hosttest.Fake{Else: &hosttest.Local{}}).
		On("sysctl -n", "net.bridge.bridge-nf-call-iptables\terr\tro\tsysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory\n"+
			"net.ipv4.ip_forward\tok\trw\t0\n"+
			"net.ipv4.ping_group_range\tok\trw\t0 2147483647\n")
	c, err := (Sysctl{Values: values, Path: path}).Plan(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Actions) != 1 || c.Actions[0] != "set net.ipv4.ip_forward = 1 (now 0)" {
		t.Errorf("actions = %q", c.Actions)
	}
	if len(c.Failed) != 1 || c.Failed[0].Item != "net.bridge.bridge-nf-call-iptables" || !strings.Contains(c.Failed[0].Reason, "cannot stat") {
		t.Errorf("failed = %v", c.Failed)
	}
}
