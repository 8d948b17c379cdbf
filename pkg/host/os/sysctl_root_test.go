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

// TestSysctl_Root sets real keys in a throwaway network namespace (net.*
// keys are per namespace), twice: the second run must change nothing, and
// a read-only key and an unknown key are reported, not fatal, each time.
func TestSysctl_Root(t *testing.T) {
	r := hosttest.Netns(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sysctl.d", "90-cargoship.conf")
	step := Sysctl{Path: path, Values: map[string]string{
		"net.ipv4.ip_forward":           "1",
		"net.ipv4.conf.all.forwarding":  "1",
		"net.ipv4.ping_group_range":     "0 2147483647",
		"kernel.ostype":                 "NotLinux", // read-only: sysctl -w may exit 0
		"net.cargoship.nonexistent_key": "1",
	}}
	plan, err := step.Plan(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	// The plan already knows kernel.ostype is read-only and the unknown key
	// is missing: a dry run reports both as refused, not as changes.
	if !plan.Changed() || len(plan.Failed) != 2 {
		t.Errorf("plan = %+v", plan)
	}
	first, err := step.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range first.Failed {
		failed[f.Item] = true
	}
	if !failed["kernel.ostype"] || !failed["net.cargoship.nonexistent_key"] || len(failed) != 2 {
		t.Errorf("failed = %v", first.Failed)
	}
	if !slices.Contains(first.Actions, "set net.ipv4.ip_forward = 1") || !slices.Contains(first.Actions, "write "+path) {
		t.Errorf("actions = %q", first.Actions)
	}
	out, err := r.Run(ctx, "sysctl -n net.ipv4.ip_forward")
	if err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("ip_forward in the namespace = %q %v", out, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(RenderSysctl(step.Values)) {
		t.Errorf("file = %q", b)
	}
	second, err := step.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if second.Changed() || len(second.Failed) != 2 {
		t.Errorf("second apply = %+v", second)
	}
}
