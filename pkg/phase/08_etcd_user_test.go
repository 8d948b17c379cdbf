package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

func hasEtcdUser(steps []hostos.Step) bool {
	for _, st := range steps {
		if u, ok := st.(hostos.SystemUser); ok && u.Name == "etcd" {
			return true
		}
	}
	return false
}

// rke2-server with profile cis exits without an etcd user and group:
// phase 8 creates them on rke2 controllers with that profile, from the
// distro or from the inventory profile a host names, and nowhere else.
func TestPrepareHostsEtcdUserForRKE2CIS(t *testing.T) {
	ctl := hostFor(v1alpha1.RoleController, v1alpha1.FamilyEnterpriseLinux, "amd64")
	wrk := hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyEnterpriseLinux, "amd64")
	prof := hostFor(v1alpha1.RoleController, v1alpha1.FamilyEnterpriseLinux, "amd64")
	prof.Spec.Profile = "hardened"
	cluster := &v1alpha1.Cluster{}
	cluster.Spec.Config.Profiles = []v1alpha1.Profile{{Name: "hardened", EngineConfig: map[string]any{"profile": "cis-1.23"}}}
	for _, c := range []struct {
		engine, profile string
		want            map[*node.Host]bool
	}{
		{v1alpha1.EngineRKE2, "cis", map[*node.Host]bool{ctl: true, wrk: false, prof: true}},
		{v1alpha1.EngineRKE2, "", map[*node.Host]bool{ctl: false, wrk: false, prof: true}},
		{v1alpha1.EngineK3s, "cis", map[*node.Host]bool{ctl: false, wrk: false, prof: false}},
	} {
		d := &v1alpha1.Distro{Spec: v1alpha1.DistroSpec{Type: c.engine}}
		if c.profile != "" {
			d.Spec.Config.Engine.Config = map[string]any{"profile": c.profile}
		}
		p := NewPrepareHosts()
		Bind(p, &node.Fleet{Distro: d, Cluster: cluster, Hosts: node.Hosts{ctl, wrk, prof}, Report: &node.Report{}})
		require.NoError(t, p.Prepare(context.Background()))
		for h, want := range c.want {
			assert.Equal(t, want, hasEtcdUser(p.steps[h]), "%s profile %q, %s (inventory profile %q)", c.engine, c.profile, h.Spec.Role, h.Spec.Profile)
		}
	}
}
