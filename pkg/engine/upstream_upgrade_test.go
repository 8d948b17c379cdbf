package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// The commands of kubeadm's upgrade (docs/reference/engines.md 7.1).
func TestKubeadmUpgradeCommands(t *testing.T) {
	e, _ := For(v1alpha1.EngineUpstream)
	u, ok := e.(KubeadmUpgrader)
	require.True(t, ok)
	for _, k := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		r, _ := For(k)
		_, ok := r.(KubeadmUpgrader)
		assert.False(t, ok, "%s is upgraded by swapping its binary", k)
	}
	v, err := ParseVersion("1.35.3")
	require.NoError(t, err)
	assert.Equal(t, []string{"kubeadm"}, u.UpgradeFirst())
	assert.Equal(t, "if [ -d /etc/cargoship/kubeadm-patches ]; then "+
		"/usr/bin/kubeadm upgrade apply v1.35.3 --yes --certificate-renewal=true --etcd-upgrade=true --patches /etc/cargoship/kubeadm-patches; "+
		"else /usr/bin/kubeadm upgrade apply v1.35.3 --yes --certificate-renewal=true --etcd-upgrade=true; fi", u.UpgradeApplyCommand(v, nil))
	assert.Equal(t, "if [ -d /etc/cargoship/kubeadm-patches ]; then "+
		"/usr/bin/kubeadm upgrade node --certificate-renewal=true --etcd-upgrade=true --patches /etc/cargoship/kubeadm-patches; "+
		"else /usr/bin/kubeadm upgrade node --certificate-renewal=true --etcd-upgrade=true; fi", u.UpgradeNodeCommand(nil))
	assert.Equal(t, "if [ -d /etc/cargoship/kubeadm-patches ]; then "+
		"/usr/bin/kubeadm upgrade node --certificate-renewal=true --etcd-upgrade=true --ignore-preflight-errors=Swap,SystemVerification --patches /etc/cargoship/kubeadm-patches; "+
		"else /usr/bin/kubeadm upgrade node --certificate-renewal=true --etcd-upgrade=true --ignore-preflight-errors=Swap,SystemVerification; fi",
		u.UpgradeNodeCommand(KubeadmIgnoredPreflight(map[string]any{
			"initConfiguration": map[string]any{"nodeRegistration": map[string]any{"ignorePreflightErrors": []any{"SystemVerification"}}},
			"joinConfiguration": map[string]any{"nodeRegistration": map[string]any{"ignorePreflightErrors": []any{"Swap", "SystemVerification"}}},
		})), "the checks the config skips at init and join are skipped at upgrade")
	assert.Equal(t, "systemctl restart kubelet", u.RestartKubeletCommand())
}

// The image command runs through a real shell over manifests as kubeadm
// writes them, and ControlPlaneVersions reads its output.
func TestControlPlaneVersionsFromTheStaticPodManifests(t *testing.T) {
	e, _ := For(v1alpha1.EngineUpstream)
	u := e.(KubeadmUpgrader)
	dir := t.TempDir()
	manifest := func(pod, image string) {
		body := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + pod + "\nspec:\n  containers:\n  - command:\n    - " + pod + "\n    image: " + image + "\n    imagePullPolicy: IfNotPresent\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, pod+".yaml"), []byte(body), 0o600))
	}
	manifest("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.35.3")
	manifest("kube-controller-manager", "registry.k8s.io/kube-controller-manager:v1.35.3")
	manifest("kube-scheduler", "registry.example:5000/k8s/kube-scheduler:v1.34.6")
	cmd := strings.ReplaceAll(u.ControlPlaneImagesCommand(), manifestsDir, dir)
	out, err := exec.Command("sh", "-c", cmd).Output()
	require.NoError(t, err)
	got, err := ControlPlaneVersions(string(out))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"kube-apiserver": "v1.35.3", "kube-controller-manager": "v1.35.3", "kube-scheduler": "v1.34.6"}, got)

	require.NoError(t, os.Remove(filepath.Join(dir, "kube-controller-manager.yaml")))
	out, err = exec.Command("sh", "-c", cmd).Output()
	require.NoError(t, err)
	_, err = ControlPlaneVersions(string(out))
	require.ErrorContains(t, err, "kube-controller-manager.yaml names no image")
	_, err = ControlPlaneVersions("")
	require.ErrorContains(t, err, "no kube-apiserver static pod manifest")
	_, err = ControlPlaneVersions("/etc/kubernetes/manifests/kube-apiserver.yaml registry.example:5000/kube-apiserver\n")
	require.ErrorContains(t, err, "names no tagged image")
}
