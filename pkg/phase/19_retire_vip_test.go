package phase

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/vip"
)

// retireFleet is one k3s controller whose probe for earlier providers
// answers probe (the first line of keepalived.conf, a blank line, then
// "kube-vip" when its manifest is there), with a running engine.
func retireFleet(t *testing.T, v *v1alpha1.VIP, probe string) (*node.Fleet, *hosttest.Fake) {
	t.Helper()
	c := &v1alpha1.Cluster{Metadata: v1alpha1.ClusterMetadata{Name: "test"}}
	c.Spec.Config.Loadbalancer = "10.0.0.100"
	c.Spec.Config.VIP = v
	c.Spec.Hosts = []v1alpha1.Host{{SSH: &v1alpha1.SSH{Address: "10.0.0.1"}, Hostname: "c1", PrivateAddress: "10.0.0.1", Role: v1alpha1.RoleController}}
	d := &v1alpha1.Distro{}
	d.Spec.Type, d.Spec.Version = v1alpha1.EngineK3s, "1.35.3-k3s1"
	s := node.New(c, d, node.Options{Concurrency: 4}, slog.New(slog.DiscardHandler))
	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	s.Engine = eng
	f := (&hosttest.Fake{Name: "c1"}).On("head -n1", probe)
	s.Hosts[0].Conn, s.Hosts[0].EngineRunning = f, true
	return s, f
}

// A controller keepalived announced for, in a cluster whose VIP is now
// kube-vip's (or gone), has keepalived stopped and cargoship's files
// removed, before anything else of the phase.
func TestKeepalivedIsRetiredWhenTheVIPIsNoLongerItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, v := range []*v1alpha1.VIP{{Address: "10.0.0.100"}, nil} {
		s, f := retireFleet(t, v, "# Written by cargoship for cluster test (docs/ha.md); an apply rewrites it.\n\n")
		p := &ConfigureVIP{}
		require.NoError(t, prepare(ctx, p, s))
		require.True(t, p.ShouldRun())
		plan, err := p.Plan(ctx)
		require.NoError(t, err)
		require.Len(t, plan, 1)
		assert.Contains(t, plan[0].What, "stop keepalived")
		require.NoError(t, p.Run(ctx))
		assert.True(t, f.Ran("systemctl disable --now keepalived.service"), "%v", f.Commands())
		assert.True(t, f.Ran(vip.ConfigPath) && f.Ran(vip.CheckScriptPath))
	}
}

// A keepalived.conf of the site's own (no cargoship header) is left alone,
// and so is a cluster still on keepalived.
func TestOnlyCargoshipsKeepalivedIsRetired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := retireFleet(t, nil, "! Configuration File for keepalived\n\n")
	p := &ConfigureVIP{}
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "the site's own keepalived stays")
}

// A cluster that moved off kube-vip: its manifest is removed from the
// manifests directory and, since k3s leaves a removed file's objects,
// its objects are deleted by name.
func TestKubeVIPIsRetiredWithItsObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, f := retireFleet(t, nil, "\nkube-vip\n")
	p := &ConfigureVIP{}
	require.NoError(t, prepare(ctx, p, s))
	plan, err := p.Plan(ctx)
	require.NoError(t, err)
	require.Len(t, plan, 2)
	require.NoError(t, p.Run(ctx))
	var deleted, removed bool
	for _, c := range f.Commands() {
		deleted = deleted || strings.Contains(c, "delete --ignore-not-found daemonset.apps/kube-vip-ds")
		removed = removed || strings.Contains(c, "rm -f /var/lib/rancher/k3s/server/manifests/cargoship-kube-vip.yaml")
	}
	assert.True(t, deleted, "kube-vip's objects deleted: %v", f.Commands())
	assert.True(t, removed, "its manifest removed: %v", f.Commands())

	s, _ = retireFleet(t, &v1alpha1.VIP{Address: "10.0.0.100"}, "\nkube-vip\n")
	p = &ConfigureVIP{}
	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "a cluster still on kube-vip keeps it")
}
