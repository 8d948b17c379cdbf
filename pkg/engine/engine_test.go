package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func TestForKnowsEveryEngineAndNoOther(t *testing.T) {
	for _, name := range v1alpha1.Engines {
		e, err := For(name)
		require.NoError(t, err)
		assert.Equal(t, name, e.Name())
	}
	_, err := For("k0s")
	assert.ErrorContains(t, err, `engine "k0s" is not supported`)
}

func TestPaths(t *testing.T) {
	k3s, _ := For(v1alpha1.EngineK3s)
	p := k3s.Paths()
	assert.Equal(t, "/usr/local/bin/k3s", p.Binary)
	assert.Equal(t, "/etc/rancher/k3s/config.yaml", p.Config)
	assert.Equal(t, "/etc/rancher/k3s/k3s.yaml", p.Kubeconfig)
	assert.Equal(t, "/var/lib/rancher/k3s/agent/images", p.ImagesDir)
	assert.Equal(t, "/var/lib/rancher/k3s/server/manifests", p.ManifestsDir)
	assert.Equal(t, "/usr/local/bin/k3s-agent-uninstall.sh", p.AgentUninstall)

	rke2, _ := For(v1alpha1.EngineRKE2)
	p = rke2.Paths()
	assert.Equal(t, "/etc/rancher/rke2/rke2.yaml", p.Kubeconfig)
	assert.Equal(t, "/etc/rancher/rke2/registries.yaml", p.Registries)
	assert.Equal(t, "/var/lib/rancher/rke2/agent/images", p.ImagesDir)
	assert.Equal(t, "/usr/local/bin/rke2-uninstall.sh", p.AgentUninstall)

	up, _ := For(v1alpha1.EngineUpstream)
	p = up.Paths()
	assert.Equal(t, "/etc/cargoship/kubeadm.yaml", p.Config)
	assert.Equal(t, "/etc/kubernetes/admin.conf", p.Kubeconfig)
	assert.Equal(t, v1alpha1.DefaultImagesDir(v1alpha1.EngineUpstream), p.ImagesDir)
	assert.Empty(t, p.ManifestsDir, "kubeadm has no auto-deploy directory")
}

// A reset removes the engine's own subdirectories and leaves their shared
// parents and the node password (docs/reference/behaviour.md, "Removing a
// host").
func TestCleanupPathsLeaveSharedParents(t *testing.T) {
	for _, name := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		e, _ := For(name)
		paths := e.CleanupPaths()
		assert.Contains(t, paths, "/etc/rancher/"+name)
		assert.Contains(t, paths, "/var/lib/rancher/"+name)
		for _, p := range paths {
			assert.NotContains(t, []string{"/etc/rancher", "/var/lib/rancher", "/etc/rancher/node", "/", "/etc", "/var/lib"}, p)
			assert.True(t, filepath.IsAbs(p) && filepath.Clean(p) == p, p)
		}
	}
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Contains(t, up.CleanupPaths(), "/etc/kubernetes")
	assert.Contains(t, up.CleanupPaths(), "/var/lib/etcd")
}

func TestPortsPerRole(t *testing.T) {
	port := func(p, proto string) v1alpha1.Port {
		return v1alpha1.Port{Port: v1alpha1.PortValue(p), Protocol: proto}
	}
	k3s, _ := For(v1alpha1.EngineK3s)
	got, err := k3s.Ports(true, nil)
	require.NoError(t, err)
	assert.Equal(t, []v1alpha1.Port{port("2379-2380", "tcp"), port("6443", "tcp"), port("8472", "udp"), port("10250", "tcp")}, got)
	got, err = k3s.Ports(false, map[string]any{"flannel-backend": "wireguard-native", "embedded-registry": true})
	require.NoError(t, err)
	assert.Equal(t, []v1alpha1.Port{port("5001", "tcp"), port("6443", "tcp"), port("10250", "tcp"), port("51820", "udp"), port("51821", "udp")}, got)

	rke2, _ := For(v1alpha1.EngineRKE2)
	got, err = rke2.Ports(true, map[string]any{"cni": []any{"multus", "cilium"}})
	require.NoError(t, err)
	assert.Equal(t, []v1alpha1.Port{
		port("2379-2381", "tcp"), port("4240", "tcp"), port("6443", "tcp"), port("8472", "udp"),
		port("9345", "tcp"), port("10250", "tcp"), port("30000-32767", "tcp"), port("51871", "udp"),
	}, got)
	got, err = rke2.Ports(false, nil) // canal by default
	require.NoError(t, err)
	assert.Contains(t, got, port("9099", "tcp"))
	assert.NotContains(t, got, port("9345", "tcp"), "workers serve no supervisor")
	_, err = rke2.Ports(false, map[string]any{"cni": "weave"})
	require.ErrorContains(t, err, "weave")

	up, _ := For(v1alpha1.EngineUpstream)
	got, err = up.Ports(true, nil)
	require.NoError(t, err)
	assert.Equal(t, []v1alpha1.Port{port("2379-2380", "tcp"), port("6443", "tcp"), port("10250", "tcp"), port("10256", "tcp"), port("10257", "tcp"), port("10259", "tcp")}, got)
	// Workers too: kube-proxy's health port is what a load balancer's
	// health check dials on every node.
	got, err = up.Ports(false, nil)
	require.NoError(t, err)
	assert.Equal(t, []v1alpha1.Port{port("10250", "tcp"), port("10256", "tcp"), port("30000-32767", "tcp")}, got)
}

func TestNetwork(t *testing.T) {
	k3s, _ := For(v1alpha1.EngineK3s)
	n, err := k3s.Network(nil)
	require.NoError(t, err)
	assert.Equal(t, Network{PodCIDRs: []string{"10.42.0.0/16"}, ServiceCIDRs: []string{"10.43.0.0/16"}}, n)
	n, err = k3s.Network(map[string]any{"cluster-cidr": "10.52.0.0/16,fd00:52::/56", "service-cidr": []any{"10.53.0.0/16"}})
	require.NoError(t, err)
	assert.Equal(t, Network{PodCIDRs: []string{"10.52.0.0/16", "fd00:52::/56"}, ServiceCIDRs: []string{"10.53.0.0/16"}}, n)
	_, err = k3s.Network(map[string]any{"cluster-cidr": "10.52.0.0"})
	require.ErrorContains(t, err, "not a CIDR")

	up, _ := For(v1alpha1.EngineUpstream)
	n, err = up.Network(map[string]any{"clusterConfiguration": map[string]any{"networking": map[string]any{"podSubnet": "10.244.0.0/16"}}})
	require.NoError(t, err)
	assert.Equal(t, Network{PodCIDRs: []string{"10.244.0.0/16"}, ServiceCIDRs: []string{"10.96.0.0/12"}}, n)
}

func TestAdminKubeconfigPointsAtTheLoadBalancer(t *testing.T) {
	raw := []byte(`apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTg==
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
`)
	out, err := AdminKubeconfig(raw, ServerURL("10.0.0.10", 6443))
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "server: https://10.0.0.10:6443")
	assert.NotContains(t, s, "127.0.0.1")
	assert.Contains(t, s, "client-key-data: a2V5", "credentials are kept")
	assert.Contains(t, s, "certificate-authority-data: LS0tLS1CRUdJTg==")

	_, err = AdminKubeconfig(raw, "10.0.0.10")
	require.ErrorContains(t, err, "https://")
	_, err = AdminKubeconfig([]byte("kind: Config\n"), ServerURL("10.0.0.10", 6443))
	assert.ErrorContains(t, err, "no cluster")
}

// The expected hash is openssl's, for the committed test CA:
// openssl x509 -pubkey -in ca.crt -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex
func TestCACertHashMatchesOpenSSL(t *testing.T) {
	pemBytes, err := os.ReadFile(filepath.Join("testdata", "ca.crt"))
	require.NoError(t, err)
	got, err := CACertHash(pemBytes)
	require.NoError(t, err)
	assert.Equal(t, "sha256:25ee30bdf904e020683f4787cdfd60f6e2318c8620c004b9ad4ecfae864dcba1", got)
	assert.Regexp(t, caCertHashRE, got)

	_, err = CACertHash([]byte("not a certificate"))
	assert.Error(t, err)
}

func TestNewCertificateKey(t *testing.T) {
	a, err := NewCertificateKey()
	require.NoError(t, err)
	b, err := NewCertificateKey()
	require.NoError(t, err)
	assert.Regexp(t, certificateKeyRE, a)
	assert.NotEqual(t, a, b)
}

func TestTomlStringEscapes(t *testing.T) {
	assert.Equal(t, "'https://m.example.com'", tomlString("https://m.example.com"))
	assert.Equal(t, `"it's \"q\"\n"`, tomlString("it's \"q\"\n"))
	assert.True(t, strings.HasPrefix(tomlString("a\x01"), `"a\u0001`))
}
