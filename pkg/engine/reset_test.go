package engine

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// configOf renders host with leader as the cluster's first server and
// returns its engine config.
func (f fixture) configOf(t *testing.T, host, leader string) []byte {
	t.Helper()
	in := f.input(t, host, leader, false)
	in.Token = testToken // the cluster runs: every node, the first too, has the token
	r, err := f.engine.Render(in)
	require.NoError(t, err)
	file, ok := r.File(f.engine.Paths().Config)
	require.True(t, ok)
	return file.Content
}

// Removing the first server (c1) repoints the rest at c2: c2's config
// becomes the first's and c3's and w1's join through c2. Each must be what
// apply renders for that role afterwards, or the next apply restarts them.
func TestRepointGivesWhatRenderGivesTheNewRoles(t *testing.T) {
	for _, name := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name, "cluster-ha.yaml")
			rp, ok := f.engine.(Repointer)
			require.True(t, ok)
			c2 := f.hostNamed(t, "c2").PrivateAddress

			got, err := rp.Repoint(f.configOf(t, "c2", "c1"), "", true)
			require.NoError(t, err)
			assert.Equal(t, string(f.configOf(t, "c2", "c2")), string(got), "c2 becomes the first server")
			assert.Empty(t, ServerOf(got))

			for _, h := range []string{"c3", "w1"} {
				got, err := rp.Repoint(f.configOf(t, h, "c1"), c2, h != "w1")
				require.NoError(t, err)
				assert.Equal(t, string(f.configOf(t, h, "c2")), string(got), "%s joins through c2", h)
				assert.Equal(t, c2, ServerOf(got))
			}
		})
	}
	up, err := For(v1alpha1.EngineUpstream)
	require.NoError(t, err)
	_, ok := up.(Repointer)
	assert.False(t, ok, "kubeadm nodes name no server in a config cargoship can rewrite")
}

func TestRemovalNeverTakesSharedParents(t *testing.T) {
	shared := []string{"/", "/etc", "/var/lib", "/etc/rancher", "/var/lib/rancher", "/etc/rancher/node",
		"/usr/local/bin", "/usr/bin", "/etc/systemd/system", "/run", "/opt"}
	for _, name := range v1alpha1.Engines {
		e, err := For(name)
		require.NoError(t, err)
		rm := e.Removal()
		for _, p := range append(append(append([]string{}, rm.Files...), rm.Links...), rm.Dirs...) {
			assert.NotContains(t, shared, p, "%s removes a shared parent", name)
			assert.True(t, filepath.IsAbs(p) && filepath.Clean(p) == p, p)
		}
	}
	k3s, _ := For(v1alpha1.EngineK3s)
	rm := k3s.Removal()
	assert.Contains(t, rm.Files, "/usr/local/bin/k3s")
	assert.Contains(t, rm.Files, "/usr/local/bin/k3s-killall.sh")
	assert.Contains(t, rm.Files, "/usr/local/bin/k3s-agent-uninstall.sh")
	assert.Contains(t, rm.Files, "/etc/systemd/system/k3s.service")
	assert.Contains(t, rm.Files, "/etc/systemd/system/k3s-agent.service.env")
	assert.Contains(t, rm.Links, "/usr/local/bin/kubectl")
	assert.Contains(t, rm.Dirs, "/var/lib/rancher/k3s")
	assert.Contains(t, rm.Dirs, "/etc/rancher/k3s")

	rke2, _ := For(v1alpha1.EngineRKE2)
	rm = rke2.Removal()
	assert.Contains(t, rm.Files, "/usr/local/bin/rke2")
	assert.Contains(t, rm.Files, "/usr/local/lib/systemd/system/rke2-server.service")
	assert.Contains(t, rm.Files, "/usr/local/lib/systemd/system/rke2-agent.env")
	assert.NotContains(t, rm.Files, "/usr/bin/rke2", "the RPM's binary is the package manager's")
	assert.Empty(t, rm.Links)
	assert.Contains(t, rm.Dirs, "/var/lib/rancher/rke2")

	up, _ := For(v1alpha1.EngineUpstream)
	rm = up.Removal()
	assert.Empty(t, rm.Files, "kubeadm, kubelet and kubectl are the packages'")
	assert.Contains(t, rm.Dirs, "/etc/kubernetes")
	assert.Contains(t, rm.Dirs, "/var/lib/etcd")
}
