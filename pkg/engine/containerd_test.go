package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainerdCgroupDriverFollowsTheKubelets: runc and the kubelet must
// use one cgroup driver, so the distro's kubeletConfiguration.cgroupDriver
// decides containerd's SystemdCgroup, on every node (the founder and the
// joins alike: only the founder's kubeadm config carries the
// KubeletConfiguration, but every containerd needs the setting).
func TestContainerdCgroupDriverFollowsTheKubelets(t *testing.T) {
	for driver, want := range map[string]string{"": "SystemdCgroup = true", "systemd": "SystemdCgroup = true", "cgroupfs": "SystemdCgroup = false"} {
		t.Run("driver="+driver, func(t *testing.T) {
			f := loadFixture(t, "upstream", "cluster-single.yaml")
			kc := mapAt(f.distro.Spec.Config.Engine.Config, "kubeletConfiguration")
			if driver != "" {
				kc["cgroupDriver"] = driver
			}
			f.distro.Spec.Config.Engine.Config["kubeletConfiguration"] = kc
			for _, h := range f.cluster.Spec.Hosts {
				in := f.input(t, h.Hostname, f.cluster.Spec.Hosts[0].Hostname, true)
				r, err := f.engine.Render(in)
				require.NoError(t, err, h.Hostname)
				file, ok := r.File(containerdConfig)
				require.True(t, ok, "%s: no containerd config", h.Hostname)
				assert.Contains(t, string(file.Content), want, h.Hostname)
			}
		})
	}
}

func TestAnUnknownCgroupDriverIsRefused(t *testing.T) {
	f := loadFixture(t, "upstream", "cluster-single.yaml")
	f.distro.Spec.Config.Engine.Config["kubeletConfiguration"] = map[string]any{"cgroupDriver": "cgroupv2"}
	h := f.cluster.Spec.Hosts[0].Hostname
	_, err := f.engine.Render(f.input(t, h, h, true))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cgroupDriver is cgroupv2")
}
