package engine

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

var rancherEngines = []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2}

// renderConfig renders a host and decodes its engine config file.
func renderConfig(t *testing.T, f fixture, in RenderInput) (Rendered, map[string]any) {
	t.Helper()
	r, err := f.engine.Render(in)
	require.NoError(t, err)
	file, ok := r.File(f.engine.Paths().Config)
	require.True(t, ok, "no config file rendered")
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(file.Content, &cfg))
	return r, cfg
}

func TestJoinURLUsesTheEnginesJoinPort(t *testing.T) {
	want := map[string]string{
		v1alpha1.EngineK3s:  "https://10.0.0.10:6443",
		v1alpha1.EngineRKE2: "https://10.0.0.10:9345",
	}
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			for _, host := range []string{"c2", "w1"} {
				_, cfg := renderConfig(t, f, f.input(t, host, "c1", true))
				assert.Equal(t, want[e], cfg["server"], host)
			}
		})
	}
	k3s, _ := For(v1alpha1.EngineK3s)
	rke2, _ := For(v1alpha1.EngineRKE2)
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Equal(t, 6443, k3s.JoinPort())
	assert.Equal(t, 9345, rke2.JoinPort())
	assert.Equal(t, 6443, up.JoinPort())
}

func TestFounderHasNoServerLineAndK3sFounderInitsEtcd(t *testing.T) {
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			_, cfg := renderConfig(t, f, f.input(t, "c1", "c1", false))
			assert.NotContains(t, cfg, "server")
			if e == v1alpha1.EngineK3s {
				assert.Equal(t, true, cfg["cluster-init"])
			} else {
				assert.NotContains(t, cfg, "cluster-init", "rke2 has no cluster-init flag")
			}
			_, joiner := renderConfig(t, f, f.input(t, "c2", "c1", false))
			assert.NotContains(t, joiner, "cluster-init")
			assert.Equal(t, "https://"+"10.0.0.11:"+map[string]string{"k3s": "6443", "rke2": "9345"}[e], joiner["server"],
				"a cold bootstrap joins through the founder")
		})
	}
}

func TestK3sExplicitClusterInitIsKept(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineK3s, "cluster-single.yaml")
	f.distro.Spec.Config.Engine.Config["cluster-init"] = false
	_, cfg := renderConfig(t, f, f.input(t, "s1", "s1", false))
	assert.Equal(t, false, cfg["cluster-init"])
}

// Keys docs/reference/engines.md 3.2 and the engines' flag tables mark
// server-only, and keys an agent takes. Listed here independently of the
// code's own list.
var (
	agentRejects = []string{
		"cluster-init", "cluster-cidr", "service-cidr", "cluster-dns",
		"cluster-domain", "service-node-port-range", "disable", "disable-cloud-controller",
		"disable-kube-proxy", "disable-network-policy", "disable-helm-controller", "cni",
		"ingress-controller", "flannel-backend", "flannel-ipv6-masq", "egress-selector-mode",
		"kube-apiserver-arg", "kube-controller-manager-arg", "kube-scheduler-arg",
		"kube-cloud-controller-manager-arg", "etcd-arg", "etcd-expose-metrics",
		"etcd-snapshot-schedule-cron", "etcd-snapshot-retention", "etcd-s3-bucket",
		"tls-san", "tls-san-security", "advertise-address", "write-kubeconfig-mode",
		"write-kubeconfig-group", "secrets-encryption", "embedded-registry",
		"system-default-registry", "datastore-endpoint", "audit-policy-file",
		"pod-security-admission-config-file", "control-plane-resource-requests",
		"kube-apiserver-extra-mount", "etcd-extra-env", "disable-etcd", "helm-job-image",
	}
	agentKeeps = []string{
		"kubelet-arg", "kube-proxy-arg", "selinux", "protect-kernel-defaults", "profile",
		"node-external-ip", "snapshotter", "resolv-conf", "lb-server-port",
		"disable-default-registry-endpoint", "image-credential-provider-config",
		"kube-proxy-extra-mount", "cloud-provider-name", "debug",
	}
)

func TestAgentConfigsHoldNoServerOnlyKey(t *testing.T) {
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			for _, k := range append(append([]string(nil), agentRejects...), agentKeeps...) {
				f.distro.Spec.Config.Engine.Config[k] = "x-" + k
			}
			// An append in a profile follows its key out too.
			f.cluster.Spec.Config.Profiles[0].EngineConfig["kube-apiserver-arg+"] = []any{"v=2"}

			for _, host := range []string{"w1", "w2"} {
				_, cfg := renderConfig(t, f, f.input(t, host, "c1", true))
				for _, k := range agentRejects {
					assert.NotContains(t, cfg, k, "%s: an agent config must not carry %s", host, k)
				}
				for _, k := range agentKeeps {
					assert.Contains(t, cfg, k, "%s: an agent keeps %s", host, k)
				}
			}
			// A controller keeps them all, but cluster-init, which only the
			// founder has.
			_, cfg := renderConfig(t, f, f.input(t, "c2", "c1", true))
			for _, k := range agentRejects {
				if k != "cluster-init" {
					assert.Contains(t, cfg, k, "a controller keeps %s", k)
				}
			}
		})
	}
}

func TestTokenNeverInAConfigWhenTokenFileIsUsed(t *testing.T) {
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			for _, host := range []string{"c1", "c2", "w1"} {
				in := f.input(t, host, "c1", true)
				in.Token, in.AgentToken = testToken, testAgentToken
				r, cfg := renderConfig(t, f, in)
				p := f.engine.Paths()
				assert.Equal(t, p.TokenFile, cfg["token-file"], host)
				assert.NotContains(t, cfg, "token", host)
				assert.NotContains(t, cfg, "agent-token", host)
				for _, file := range r.Files {
					if file.Path == p.TokenFile || file.Path == p.AgentTokenFile {
						assert.True(t, file.Secret, file.Path)
						assert.EqualValues(t, 0o600, file.Mode, file.Path)
						continue
					}
					assert.NotContains(t, string(file.Content), "s3cr3t-passw0rd", "%s: %s", host, file.Path)
					assert.NotContains(t, string(file.Content), "ag3nt-passw0rd", "%s: %s", host, file.Path)
				}
				tok, _ := r.File(p.TokenFile)
				want := testToken
				if host == "w1" {
					want = testAgentToken
				}
				assert.Equal(t, want, string(tok.Content), "%s joins with its role's token", host)
			}
		})
	}
}

func TestKubeadmConfigWithSecretsIsSecret(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineUpstream, "cluster-ha.yaml")
	r, err := f.engine.Render(f.input(t, "w1", "c1", true))
	require.NoError(t, err)
	file, ok := r.File(kubeadmConfig)
	require.True(t, ok)
	assert.True(t, file.Secret)
	assert.EqualValues(t, 0o600, file.Mode)
}

func TestRenderRefuses(t *testing.T) {
	cases := []struct {
		name, engine, host, want string
		change                   func(f fixture, in *RenderInput)
	}{
		{"no node name", "k3s", "w1", "no node name", func(f fixture, in *RenderInput) { in.Host.Hostname = "" }},
		{"no private address", "rke2", "w1", "no private address", func(f fixture, in *RenderInput) { in.Host.PrivateAddress = "" }},
		{"no token to join", "k3s", "w1", "no token", func(f fixture, in *RenderInput) { in.Token = "" }},
		{"no join address", "rke2", "c2", "no join address", func(f fixture, in *RenderInput) { in.JoinAddress = "" }},
		{"no leader", "k3s", "w1", "no leader", func(f fixture, in *RenderInput) { in.Leader = nil }},
		{"leader not a controller", "k3s", "w2", "not a controller", func(f fixture, in *RenderInput) { in.Leader = &f.cluster.Spec.Hosts[3] }},
		{"token in the document", "k3s", "w1", "manages the cluster token", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["token"] = "plain"
		}},
		{"another data dir", "rke2", "w1", "data-dir", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["data-dir"] = "/data/rke2"
		}},
		{"another registries file", "k3s", "w1", "private-registry", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["private-registry"] = "/etc/other.yaml"
		}},
		{"kubelet config set twice", "k3s", "w2", "kubelet-arg already sets config", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["kubelet-arg"] = []any{"config=/etc/mine.yaml"}
		}},
		{"kubelet config on an old engine", "rke2", "w2", "needs 1.32", func(f fixture, in *RenderInput) {
			f.distro.Spec.Version = "1.31.9-rke2r1"
		}},
		{"a bad taint", "rke2", "w2", "effect must be", func(f fixture, in *RenderInput) { in.Host.Taints = []string{"a=b:Sometimes"} }},
		{"a bad label", "k3s", "w2", "label", func(f fixture, in *RenderInput) { in.Host.Labels = map[string]string{"a,b": "c"} }},
		{"a role label the kubelet refuses", "rke2", "w2", "may not set kubernetes.io labels", func(f fixture, in *RenderInput) {
			in.Host.Labels = map[string]string{"node-role.kubernetes.io/infra": "true"}
		}},
		{"a k8s.io label for kubeadm", "upstream", "w1", "may not set k8s.io labels", func(f fixture, in *RenderInput) {
			in.Host.Labels = map[string]string{"k8s.io/x": "y"}
		}},
		{"unresolved registry password", "k3s", "w1", "$REG_PASS", func(f fixture, in *RenderInput) {
			f.cluster.Spec.Config.Registries = []v1alpha1.Registry{{Name: "r.example.com", Auth: &v1alpha1.RegistryAuth{User: "u", PassEnv: "REG_PASS"}}}
		}},
		{"chart values that are a list", "k3s", "c1", "YAML text or a mapping", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Manifest = map[string]any{"traefik": []any{"a"}}
		}},
		{"chart values that are not YAML", "rke2", "c1", "not YAML", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Manifest = map[string]any{"rke2-cilium": "a: [b"}
		}},
		{"chart name with an underscore", "rke2", "c1", "chart's name", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Manifest = map[string]any{"my_chart": "a: b"}
		}},
		{"distro of another engine", "k3s", "w1", "given to the k3s engine", func(f fixture, in *RenderInput) {
			f.distro.Spec.Type = v1alpha1.EngineRKE2
		}},
		{"kubeadm registry auth", "upstream", "w1", "no credentials", func(f fixture, in *RenderInput) {
			f.cluster.Spec.Config.Registries = []v1alpha1.Registry{{Name: "r.example.com", Auth: &v1alpha1.RegistryAuth{User: "u", Pass: "p"}}}
		}},
		{"kubeadm chart values", "upstream", "c1", "helm controller", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Manifest = map[string]any{"x": "a: b"}
		}},
		{"kubeadm unknown key", "upstream", "w1", "upstream engine config key \"cluster-cidr\"", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["cluster-cidr"] = "10.0.0.0/8"
		}},
		{"kubeadm join without CA hash", "upstream", "w1", "CA hash", func(f fixture, in *RenderInput) { in.CACertHash = "" }},
		{"kubeadm controller without certificate key", "upstream", "c2", "certificate key", func(f fixture, in *RenderInput) { in.CertificateKey = "" }},
		{"kubeadm token of another form", "upstream", "w1", "bootstrap token", func(f fixture, in *RenderInput) { in.Token = testToken }},
		{"kubeadm v1beta3 extra args", "upstream", "c1", "list of {name, value}", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["clusterConfiguration"] = map[string]any{
				"apiServer": map[string]any{"extraArgs": map[string]any{"v": "2"}},
			}
		}},
		{"kubeadm node-ip set elsewhere", "upstream", "w1", "sets node-ip", func(f fixture, in *RenderInput) {
			f.distro.Spec.Config.Engine.Config["joinConfiguration"] = map[string]any{"nodeRegistration": map[string]any{
				"kubeletExtraArgs": []any{map[string]any{"name": "node-ip", "value": "1.2.3.4"}},
			}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFixture(t, tc.engine, "cluster-ha.yaml")
			in := f.input(t, tc.host, "c1", true)
			tc.change(f, &in)
			_, err := f.engine.Render(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNodeNameOverrideAndHostLabelsWin(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineRKE2, "cluster-ha.yaml")
	in := f.input(t, "w2", "c1", true)
	in.NodeName = "w2.example.internal"
	in.Host.Labels["example.com/pool"] = "edge"
	_, cfg := renderConfig(t, f, in)
	assert.Equal(t, "w2.example.internal", cfg["node-name"])
	assert.Equal(t, "10.0.0.22", cfg["node-ip"])
	assert.Equal(t, []any{"example.com/pool=edge", "tier=infra", "zone=a"}, cfg["node-label"])
}

func TestRenderDoesNotChangeSharedDocuments(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineK3s, "cluster-ha.yaml")
	before, err := yaml.Marshal(f.distro)
	require.NoError(t, err)
	profileBefore, err := yaml.Marshal(f.cluster.Spec.Config.Profiles)
	require.NoError(t, err)
	for _, h := range []string{"c1", "c2", "w1", "w2"} {
		_, err := f.engine.Render(f.input(t, h, "c1", true))
		require.NoError(t, err)
	}
	after, _ := yaml.Marshal(f.distro)
	profileAfter, _ := yaml.Marshal(f.cluster.Spec.Config.Profiles)
	assert.Equal(t, string(before), string(after))
	assert.Equal(t, string(profileBefore), string(profileAfter))
}

func TestKubeadmControllerTaints(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineUpstream, "cluster-ha.yaml")
	c2 := f.hostNamed(t, "c2")
	c2.Taints = []string{"dedicated=cp:NoExecute"}
	r, err := f.engine.Render(f.input(t, "c2", "c1", true))
	require.NoError(t, err)
	file, _ := r.File(kubeadmConfig)
	// A pure controller keeps kubeadm's control-plane taint beside its own.
	assert.Contains(t, string(file.Content), "key: node-role.kubernetes.io/control-plane")
	assert.Contains(t, string(file.Content), "key: dedicated")

	c2.Taints = nil
	r, err = f.engine.Render(f.input(t, "c2", "c1", true))
	require.NoError(t, err)
	file, _ = r.File(kubeadmConfig)
	assert.NotContains(t, string(file.Content), "taints", "kubeadm's default applies")
}

func TestMergeReplacesListsAndAppendsWithPlus(t *testing.T) {
	base := map[string]any{
		"kubelet-arg": []any{"a=1"},
		"node-label":  []any{"x=1"},
		"nested":      map[string]any{"keep": 1, "list": []any{"b"}},
		"s":           "one",
	}
	got := merge(base, map[string]any{
		"kubelet-arg+": []any{"b=2"},
		"node-label":   []any{"y=2"},
		"nested":       map[string]any{"list": []any{"c"}},
		"s+":           "two",
		"new+":         []any{"z"},
	})
	assert.Equal(t, []any{"a=1", "b=2"}, got["kubelet-arg"])
	assert.Equal(t, []any{"y=2"}, got["node-label"])
	assert.Equal(t, map[string]any{"keep": 1, "list": []any{"c"}}, got["nested"])
	assert.Equal(t, "one,two", got["s"])
	assert.Equal(t, []any{"z"}, got["new"])
	assert.Equal(t, []any{"a=1"}, base["kubelet-arg"], "the base is not changed")
}

func TestJoinAddress(t *testing.T) {
	c := &v1alpha1.Cluster{Spec: v1alpha1.ClusterSpec{Config: v1alpha1.ClusterConfig{Loadbalancer: "vip.example.com"}}}
	founder := &v1alpha1.Host{PrivateAddress: "10.0.0.11"}
	assert.Equal(t, "vip.example.com", JoinAddress(c, founder, true))
	assert.Equal(t, "10.0.0.11", JoinAddress(c, founder, false), "cold bootstrap: the VIP is not up yet")
	c.Spec.Config.Loadbalancer = ""
	assert.Equal(t, "10.0.0.11", JoinAddress(c, founder, true))
	c.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.5/24"}
	assert.Equal(t, "10.0.0.5", JoinAddress(c, founder, true), "no load balancer: the VIP")
	assert.Equal(t, "10.0.0.11", JoinAddress(c, founder, false))
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Equal(t, "10.0.0.5", up.(FixedEndpoint).ControlPlaneEndpoint(c, founder))
	c.Spec.Config.Loadbalancer = "api.example.com"
	assert.Equal(t, "api.example.com", JoinAddress(c, founder, true), "a named load balancer wins")
	assert.Equal(t, "api.example.com", up.(FixedEndpoint).ControlPlaneEndpoint(c, founder))

	assert.Equal(t, "https://10.0.0.1:9345", ServerURL("10.0.0.1", 9345))
	assert.Equal(t, "https://[fd00::1]:6443", ServerURL("fd00::1", 6443))
}

func TestTLSSANsSortedAndDeduplicated(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineK3s, "cluster-ha.yaml")
	f.distro.Spec.Config.Engine.Config["tls-san"] = []any{"c1", "api.example.com"}
	_, cfg := renderConfig(t, f, f.input(t, "c1", "c1", false))
	want := []any{"10.0.0.10", "10.0.0.11", "10.0.0.12", "10.0.0.13", "api.example.com", "c1", "c2", "c3"}
	assert.Equal(t, want, cfg["tls-san"])
	assert.True(t, strings.HasPrefix(f.engine.Paths().Config, "/etc/rancher/k3s/"))
}

func TestHostConfigLaysTheProfileOverTheDistro(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineK3s, "cluster-ha.yaml")
	infra := HostConfig(f.cluster, f.distro, f.hostNamed(t, "w2"))
	assert.Equal(t, []any{"read-only-port=0", "max-pods=200"}, infra["kubelet-arg"], "kubelet-arg+ appends")
	assert.Equal(t, []any{"example.com/pool=infra"}, infra["node-label"])
	plain := HostConfig(f.cluster, f.distro, f.hostNamed(t, "w1"))
	assert.Equal(t, []any{"read-only-port=0"}, plain["kubelet-arg"], "w1's profile (worker) is not defined")
	assert.NotContains(t, plain, "node-label")
}

func TestDiscoveredNodeNameIsInTheCertificate(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineRKE2, "cluster-ha.yaml")
	in := f.input(t, "c2", "c1", true)
	in.NodeName = "c2.example.internal"
	_, cfg := renderConfig(t, f, in)
	assert.Contains(t, cfg["tls-san"], "c2.example.internal")
	assert.Equal(t, "c2.example.internal", cfg["node-name"])
}

// kubeadmDocs decodes the kubeadm config file a render wrote, by kind.
func kubeadmDocs(t *testing.T, r Rendered) map[string]map[string]any {
	t.Helper()
	f, ok := r.File(kubeadmConfig)
	require.True(t, ok, "no kubeadm config rendered")
	out := map[string]map[string]any{}
	for _, part := range strings.Split(string(f.Content), "\n---\n") {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(part), &doc))
		out[doc["kind"].(string)] = doc
	}
	return out
}

func TestVIPIsInEveryControllersCertificate(t *testing.T) {
	for _, e := range v1alpha1.Engines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			// A DNS name in front: the VIP is named anyway, without its prefix.
			f.cluster.Spec.Config.Loadbalancer = "api.example.com"
			f.cluster.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.5/24"}
			var sans any
			if e == v1alpha1.EngineUpstream {
				r, err := f.engine.Render(f.input(t, "c1", "c1", false))
				require.NoError(t, err)
				api := kubeadmDocs(t, r)["ClusterConfiguration"]["apiServer"].(map[string]any)
				sans = api["certSANs"]
			} else {
				for _, host := range []string{"c1", "c2"} {
					_, cfg := renderConfig(t, f, f.input(t, host, "c1", false))
					assert.Contains(t, cfg["tls-san"], "10.0.0.5", host)
					sans = cfg["tls-san"]
				}
			}
			for _, want := range []string{"10.0.0.5", "api.example.com", "10.0.0.11", "10.0.0.12", "10.0.0.13"} {
				assert.Contains(t, sans, want)
			}
			assert.NotContains(t, sans, "10.0.0.5/24")
		})
	}
}
