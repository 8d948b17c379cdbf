package engine

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// Fixed secrets of the fixtures: fake, and recognisable in a golden file.
const (
	testToken          = "K10aaaabbbbccccddddeeeeffff00001111222233334444555566667777888899::server:s3cr3t-passw0rd"
	testAgentToken     = "K10aaaabbbbccccddddeeeeffff00001111222233334444555566667777888899::node:ag3nt-passw0rd"
	testKubeadmToken   = "abcdef.0123456789abcdef"
	testCACertHash     = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testCertificateKey = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	testRegistryPass   = "r3g-passw0rd"
)

// fixture is one engine's documents, loaded through the real loader so
// values have the types decoding gives them.
type fixture struct {
	engine  Engine
	cluster *v1alpha1.Cluster
	distro  *v1alpha1.Distro
}

func loadFixture(t *testing.T, engineType, clusterFile string) fixture {
	t.Helper()
	e, err := For(engineType)
	require.NoError(t, err)
	c, findings, err := v1alpha1.LoadClusterFile(filepath.Join("testdata", clusterFile))
	require.NoError(t, err, "%v", findings)
	d, findings, err := v1alpha1.LoadDistroFile(filepath.Join("testdata", "distro-"+engineType+".yaml"))
	require.NoError(t, err, "%v", findings)
	return fixture{engine: e, cluster: c, distro: d}
}

// hostNamed returns the inventory host with the given hostname.
func (f fixture) hostNamed(t *testing.T, name string) *v1alpha1.Host {
	t.Helper()
	for i := range f.cluster.Spec.Hosts {
		if f.cluster.Spec.Hosts[i].Hostname == name {
			return &f.cluster.Spec.Hosts[i]
		}
	}
	t.Fatalf("no host %s in the fixture", name)
	return nil
}

// input is the RenderInput a phase would build: host joins through the
// VIP, or through the leader while a cold bootstrap has no VIP yet.
func (f fixture) input(t *testing.T, host, leader string, vipUp bool) RenderInput {
	h, l := f.hostNamed(t, host), f.hostNamed(t, leader)
	in := RenderInput{
		Cluster: f.cluster, Distro: f.distro, Host: h, Leader: l,
		JoinAddress: JoinAddress(f.cluster, l, vipUp),
	}
	if h != l {
		in.Token = testToken
		if f.engine.Name() == v1alpha1.EngineUpstream {
			in.Token, in.CACertHash, in.CertificateKey = testKubeadmToken, testCACertHash, testCertificateKey
		}
	}
	return in
}

// mustYAML decodes a YAML snippet the way the loader decodes documents.
func mustYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(s), &m))
	return m
}

type goldenCase struct {
	name    string
	cluster string
	host    string
	leader  string
	vipUp   bool
	skip    string // an engine the case does not apply to
	prepare func(t *testing.T, f fixture, in *RenderInput)
}

var goldenCases = []goldenCase{
	{name: "founder-single", cluster: "cluster-single.yaml", host: "s1", leader: "s1"},
	{name: "founder-ha", cluster: "cluster-ha.yaml", host: "c1", leader: "c1",
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			if f.engine.Name() == v1alpha1.EngineUpstream {
				in.CertificateKey = testCertificateKey
			}
		}},
	// A cold HA bootstrap: the VIP is not up, so c2 joins through c1.
	{name: "join-controller", cluster: "cluster-ha.yaml", host: "c2", leader: "c1", vipUp: false},
	{name: "worker", cluster: "cluster-ha.yaml", host: "w1", leader: "c1", vipUp: true},
	{name: "worker-single", cluster: "cluster-single.yaml", host: "s2", leader: "s1", vipUp: true},
	{name: "worker-profile", cluster: "cluster-ha.yaml", host: "w2", leader: "c1", vipUp: true,
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			if f.engine.Name() == v1alpha1.EngineUpstream {
				f.cluster.Spec.Config.Profiles[0].EngineConfig = mustYAML(t, `
joinConfiguration:
  nodeRegistration:
    kubeletExtraArgs:
      - name: max-pods
        value: "200"
`)
			}
		}},
	{name: "agent-token", cluster: "cluster-ha.yaml", host: "w1", leader: "c1", vipUp: true,
		skip: v1alpha1.EngineUpstream,
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			in.AgentToken = testAgentToken
		}},
	{name: "registries", cluster: "cluster-ha.yaml", host: "w1", leader: "c1", vipUp: true,
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			regs := []v1alpha1.Registry{
				{Name: "docker.io", Mirrors: []string{"mirror.example.com"},
					Proxy: &v1alpha1.RegistryProxy{URL: "http://proxy.example.com:5000"}},
				{Name: "registry.example.com:5000",
					Auth: &v1alpha1.RegistryAuth{User: "puller", PassEnv: "REGISTRY_PASS"},
					TLS:  &v1alpha1.RegistryTLS{CAFile: "/etc/pki/registry-ca.pem"}},
				{Name: "quay.io", Mirrors: []string{"https://quay-mirror.example.com"},
					TLS: &v1alpha1.RegistryTLS{InsecureSkipVerify: true}},
			}
			if f.engine.Name() == v1alpha1.EngineUpstream {
				// containerd takes no credentials from hosts.toml.
				regs[1].Auth = nil
			}
			f.cluster.Spec.Config.Registries = regs
			in.RegistryPasswords = map[string]string{"registry.example.com:5000": testRegistryPass}
			f.distro.Spec.Config.Engine.Registries = mustYAML(t, `
mirrors:
  docker.io:
    endpoint:
      - https://replaced-by-the-cluster.example.com
  ghcr.io:
    endpoint:
      - https://ghcr-mirror.example.com
`)
		}},
	{name: "audit-pss", cluster: "cluster-ha.yaml", host: "c1", leader: "c1",
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Audit = mustYAML(t, `
rules:
  - level: Metadata
`)
			f.distro.Spec.Config.Engine.PodSecurity = mustYAML(t, `
plugins:
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: restricted
        enforce-version: latest
      exemptions:
        namespaces:
          - kube-system
`)
		}},
	// kube-vip holds the VIP: its DaemonSet (k3s, rke2) or static pod
	// (kubeadm, the founder's reading super-admin.conf) on controllers, a
	// chart that names the VIP.
	{name: "kube-vip-founder", cluster: "cluster-ha.yaml", host: "c1", leader: "c1",
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			withKubeVIP(t, f)
			if f.engine.Name() == v1alpha1.EngineUpstream {
				in.CertificateKey = testCertificateKey
			}
		}},
	{name: "kube-vip-join-controller", cluster: "cluster-ha.yaml", host: "c2", leader: "c1", vipUp: false,
		prepare: func(t *testing.T, f fixture, in *RenderInput) { withKubeVIP(t, f) }},
	{name: "charts", cluster: "cluster-ha.yaml", host: "c2", leader: "c1", vipUp: true,
		skip: v1alpha1.EngineUpstream,
		prepare: func(t *testing.T, f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Manifest = mustYAML(t, `
rke2-cilium: |-
  kubeProxyReplacement: true
  k8sServicePort: "6443"
traefik:
  ports:
    web:
      redirectTo: websecure
  replicas: 2
  enabled: true
`)
		}},
}

// withKubeVIP gives the fixture's cluster a kube-vip VIP on the address its
// load balancer names, on the interface every controller shares, and for
// k3s and rke2 a Cilium value naming it.
func withKubeVIP(t *testing.T, f fixture) {
	t.Helper()
	f.cluster.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.10/24"}
	for i := range f.cluster.Spec.Hosts {
		f.cluster.Spec.Hosts[i].PrivateInterface = "eth1"
	}
	if f.engine.Name() != v1alpha1.EngineUpstream {
		f.distro.Spec.Config.Engine.Manifest = mustYAML(t, `
rke2-cilium: |-
  k8sServiceHost: "{{ .VIP }}"
  k8sServicePort: "{{ .APIPort }}"
`)
	}
}

// TestRenderGolden renders every case for every engine and compares all
// files and start commands byte for byte with testdata/<engine>/<case>.
// Run with -update to rewrite them, then read the diff.
func TestRenderGolden(t *testing.T) {
	for _, engineType := range v1alpha1.Engines {
		for _, tc := range goldenCases {
			if tc.skip == engineType {
				continue
			}
			t.Run(engineType+"/"+tc.name, func(t *testing.T) {
				f := loadFixture(t, engineType, tc.cluster)
				in := f.input(t, tc.host, tc.leader, tc.vipUp)
				if tc.prepare != nil {
					tc.prepare(t, f, &in)
				}
				r, err := f.engine.Render(in)
				require.NoError(t, err)
				checkGolden(t, filepath.Join("testdata", engineType, tc.name+".golden"), formatRendered(r))

				// The same input renders the same bytes.
				again, err := f.engine.Render(in)
				require.NoError(t, err)
				require.Equal(t, formatRendered(r), formatRendered(again))
			})
		}
	}
}

// formatRendered is one readable text of every file and start command.
func formatRendered(r Rendered) string {
	var b strings.Builder
	for _, f := range r.Files {
		tag := ""
		if f.Secret {
			tag = " secret"
		}
		fmt.Fprintf(&b, "==> %s (%#o%s)\n", f.Path, f.Mode, tag)
		b.Write(f.Content)
		if !bytes.HasSuffix(f.Content, []byte("\n")) {
			b.WriteString("\n<no newline at end>\n")
		}
	}
	b.WriteString("==> start\n")
	for _, c := range r.Start {
		b.WriteString(c + "\n")
	}
	return b.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file; run go test ./pkg/engine -run TestRenderGolden -update")
	require.Equal(t, string(want), got, "output differs from %s; if the change is intended, run with -update and review the diff", path)
}
