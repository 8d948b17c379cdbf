package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// RegistrationOf is what Render writes into node-label and node-taint: the
// profile's and the host's, merged the same way.
func TestRegistrationOfMatchesWhatRenderWrites(t *testing.T) {
	for _, name := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		f := loadFixture(t, name, "cluster-ha.yaml")
		_, cfg := renderConfig(t, f, f.input(t, "w2", "c1", true))
		reg, err := RegistrationOf(f.engine, f.cluster, f.distro, f.hostNamed(t, "w2"))
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"example.com/pool": "infra", "tier": "infra", "zone": "a"}, reg.Labels, name)
		assert.Equal(t, []Taint{{Key: "dedicated", Value: "infra", Effect: "NoSchedule"}}, reg.Taints, name)
		var want []any
		for _, kv := range []string{"example.com/pool=infra", "tier=infra", "zone=a"} {
			want = append(want, kv)
		}
		assert.Equal(t, want, cfg["node-label"], name)
		assert.Equal(t, []any{reg.Taints[0].String()}, cfg["node-taint"], name)

		plain, err := RegistrationOf(f.engine, f.cluster, f.distro, f.hostNamed(t, "w1"))
		require.NoError(t, err)
		assert.Empty(t, plain.Labels, name)
		assert.Empty(t, plain.Taints, name)
	}
}

// kubeadm's are the host's own: the profile's engineConfig holds kubeadm
// documents, and the control-plane taint is kubeadm's.
func TestRegistrationOfKubeadmIsTheHosts(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineUpstream, "cluster-ha.yaml")
	c2 := f.hostNamed(t, "c2")
	c2.Taints = []string{"dedicated=cp:NoExecute"}
	reg, err := RegistrationOf(f.engine, f.cluster, f.distro, c2)
	require.NoError(t, err)
	assert.Equal(t, []Taint{{Key: "dedicated", Value: "cp", Effect: "NoExecute"}}, reg.Taints)
	assert.Empty(t, reg.Labels)
}

func TestTaintForms(t *testing.T) {
	tt, err := ParseTaint("gpu:NoSchedule")
	require.NoError(t, err)
	assert.Equal(t, "gpu:NoSchedule", tt.String())
	assert.Equal(t, "gpu:NoSchedule", tt.ID())
	tt, err = ParseTaint("a=b:NoExecute")
	require.NoError(t, err)
	assert.Equal(t, "a=b:NoExecute", tt.String())
	assert.Equal(t, "a:NoExecute", tt.ID())
	_, err = ParseTaint("a=b")
	require.Error(t, err)
}

func TestOnlyRegistrationDiffers(t *testing.T) {
	k3s, _ := For(v1alpha1.EngineK3s)
	up, _ := For(v1alpha1.EngineUpstream)
	base := "node-name: w1\nnode-ip: 10.0.0.21\n"
	cases := []struct {
		name       string
		have, want string
		only       bool
	}{
		{"a label changed", base + "node-label:\n  - zone=a\n", base + "node-label:\n  - zone=b\n", true},
		{"labels and taints added", base, base + "node-label:\n  - zone=b\nnode-taint:\n  - a=b:NoSchedule\n", true},
		{"taints removed", base + "node-taint:\n  - a=b:NoSchedule\n", base, true},
		{"same keys, other order", "node-ip: 10.0.0.21\nnode-label: [zone=a]\nnode-name: w1\n", base + "node-label: [zone=b]\n", true},
		{"another key changed too", base + "node-label: [zone=a]\n", "node-name: w1\nnode-ip: 10.0.0.99\nnode-label: [zone=b]\n", false},
		{"another key added", base, base + "node-label: [zone=b]\nselinux: true\n", false},
		{"the host's file is not YAML", "{{{", base, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.only, OnlyRegistrationDiffers(k3s, []byte(c.have), []byte(c.want)), c.name)
	}
	assert.False(t, OnlyRegistrationDiffers(up, []byte(base), []byte(base+"node-label: [zone=b]\n")),
		"kubeadm's config is read at init and join only: no key of it is registration-only here")
}
