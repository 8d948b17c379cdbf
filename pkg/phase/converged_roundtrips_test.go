package phase

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// convergedFleet is one rke2 CIS controller whose conn is f, counted.
func convergedFleet(t *testing.T, f *hosttest.Fake, d *v1alpha1.Distro, dryRun bool) *node.Fleet {
	t.Helper()
	c := &v1alpha1.Cluster{}
	c.Spec.Hosts = []v1alpha1.Host{{Hostname: "kc0", Role: v1alpha1.RoleController, Environment: map[string]string{"HTTP_PROXY": "http://proxy:3128"}}}
	s := node.New(c, d, node.Options{DryRun: dryRun}, slog.New(slog.DiscardHandler))
	for _, h := range s.Hosts {
		h.Conn = s.Report.CountRoundTrips(h.String(), f)
	}
	return s
}

// walk runs phases over s and returns each phase's round trips to kc0.
func walk(t *testing.T, s *node.Fleet, phases ...Phase) map[string]int {
	t.Helper()
	m := &Manager{State: s, Phases: phases}
	require.NoError(t, m.Run(context.Background()))
	got := map[string]int{}
	for _, rt := range s.Report.RoundTrips() {
		got[rt.Phase] += rt.N
	}
	return got
}

// convergedPrepared answers phase 8's reads as a host it already prepared.
func convergedPrepared(sysctl map[string]string) *hosttest.Fake {
	f := &hosttest.Fake{Name: "kc0", Strict: true}
	f.On("modules-load.d/cargoship.conf", string(hostos.RenderModules(hostos.ModulesFor(sysctl))))
	f.On("modules.builtin", "br_netfilter loaded\noverlay loaded\n")
	f.On("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n")
	f.On("/etc/fstab", "UUID=1 / ext4 defaults 0 1\n")
	f.Fail("90-cargoship.conf", 44, "")
	f.On("zzz-cargoship.conf", string(hostos.RenderSysctl(sysctl)))
	f.On("awk", "")
	f.On("sysctl -n", "net.ipv4.ip_forward\tok\trw\t1\n")
	f.On("/etc/environment", "HTTP_PROXY=http://proxy:3128\n")
	f.On("getent", "user=yes\ngroup=yes\n")
	return f
}

// TestConvergedPrepareHostsAsksOnce checks that phase 8 asks a host it
// already prepared once, for every step's reads, in a run and in a dry
// run, and changes nothing. The count is the fake's own record of calls.
func TestConvergedPrepareHostsAsksOnce(t *testing.T) {
	sysctl := map[string]string{"net.ipv4.ip_forward": "1"}
	d := &v1alpha1.Distro{Spec: v1alpha1.DistroSpec{Type: v1alpha1.EngineRKE2}}
	d.Spec.Config.OS.Sysctl = sysctl
	d.Spec.Config.Engine.Config = map[string]any{"profile": "cis"}
	for _, dry := range []bool{false, true} {
		f := convergedPrepared(sysctl)
		s := convergedFleet(t, f, d, dry)
		got := walk(t, s, NewPrepareHosts())
		assert.Equal(t, 1, got["Prepare hosts"], "dry run %v: %v", dry, got)
		assert.Len(t, f.Calls(), 1, "dry run %v", dry)
		assert.Empty(t, s.Report.Changes(), "dry run %v", dry)
		assert.True(t, f.Ran("sysctl -n") && f.Ran("getent") && f.Ran("/etc/environment"), "dry run %v: a step's reads are missing", dry)
	}
}
