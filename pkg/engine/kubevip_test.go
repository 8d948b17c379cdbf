package engine

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// kubeVIPPod is the pod spec of a rendered kube-vip manifest: the
// DaemonSet's template (k3s, rke2) or the static pod (upstream), with its
// container's environment by name.
type kubeVIPPod struct {
	spec  map[string]any
	env   map[string]any
	image string
}

func renderKubeVIP(t *testing.T, f fixture, in RenderInput) (Rendered, *kubeVIPPod) {
	t.Helper()
	r, err := f.engine.Render(in)
	require.NoError(t, err)
	file, ok := r.File(KubeVIPManifestPath(f.engine))
	if !ok {
		return r, nil
	}
	var spec map[string]any
	for _, part := range strings.Split(string(file.Content), "\n---\n") {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(part), &doc))
		switch doc["kind"] {
		case "DaemonSet":
			spec = doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		case "Pod":
			spec = doc["spec"].(map[string]any)
		}
	}
	require.NotNil(t, spec, "no DaemonSet or Pod in %s", file.Path)
	c := spec["containers"].([]any)[0].(map[string]any)
	env := map[string]any{}
	for _, e := range c["env"].([]any) {
		m := e.(map[string]any)
		if v, ok := m["value"]; ok {
			env[m["name"].(string)] = v
		} else {
			env[m["name"].(string)] = m["valueFrom"]
		}
	}
	return r, &kubeVIPPod{spec: spec, env: env, image: c["image"].(string)}
}

// kubeVIPFixture is the HA fixture with a kube-vip VIP.
func kubeVIPFixture(t *testing.T, engineType string, vip v1alpha1.VIP) fixture {
	t.Helper()
	f := loadFixture(t, engineType, "cluster-ha.yaml")
	f.cluster.Spec.Config.VIP = &vip
	return f
}

func TestKubeVIPManifestPath(t *testing.T) {
	want := map[string]string{
		v1alpha1.EngineK3s:      "/var/lib/rancher/k3s/server/manifests/cargoship-kube-vip.yaml",
		v1alpha1.EngineRKE2:     "/var/lib/rancher/rke2/server/manifests/cargoship-kube-vip.yaml",
		v1alpha1.EngineUpstream: "/etc/kubernetes/manifests/kube-vip.yaml",
	}
	for e, p := range want {
		eng, err := For(e)
		require.NoError(t, err)
		assert.Equal(t, p, KubeVIPManifestPath(eng), e)
	}
}

func TestKubeVIPSettingsLandInTheManifest(t *testing.T) {
	for _, e := range v1alpha1.Engines {
		t.Run(e, func(t *testing.T) {
			f := kubeVIPFixture(t, e, v1alpha1.VIP{
				Address: "10.0.0.10/24", Interface: "bond0",
				KubeVIP: &v1alpha1.KubeVIP{Image: "registry.example.com/kube-vip:v1.2.3", LeaseDuration: 15, RenewDeadline: 10, RetryPeriod: 2},
			})
			_, pod := renderKubeVIP(t, f, f.input(t, "c1", "c1", false))
			require.NotNil(t, pod)
			assert.Equal(t, "registry.example.com/kube-vip:v1.2.3", pod.image, "the cluster's image wins over the distro's")
			for k, v := range map[string]string{
				"address": "10.0.0.10", "vip_subnet": "24", "vip_interface": "bond0", "port": "6443",
				"vip_leaseduration": "15", "vip_renewdeadline": "10", "vip_retryperiod": "2",
				"vip_arp": "true", "cp_enable": "true", "cp_namespace": "kube-system",
				"vip_leaderelection": "true", "vip_leasename": KubeVIPLease,
			} {
				assert.Equal(t, v, pod.env[k], k)
			}
			assert.Equal(t, map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}, pod.env["vip_nodename"])
			assert.NotContains(t, pod.env, "vip_cidr", "kube-vip 0.9 on reads vip_subnet only")
			assert.Equal(t, true, pod.spec["hostNetwork"])
			caps := pod.spec["containers"].([]any)[0].(map[string]any)["securityContext"].(map[string]any)["capabilities"].(map[string]any)
			assert.Equal(t, []any{"NET_ADMIN", "NET_RAW"}, caps["add"])

			if e == v1alpha1.EngineUpstream {
				assert.NotContains(t, pod.env, "KUBERNETES_SERVICE_HOST", "a static pod reads a kubeconfig")
				assert.Equal(t, []any{map[string]any{"ip": "127.0.0.1", "hostnames": []any{"kubernetes"}}}, pod.spec["hostAliases"])
				assert.NotContains(t, pod.spec, "serviceAccountName")
				return
			}
			assert.Equal(t, "127.0.0.1", pod.env["KUBERNETES_SERVICE_HOST"])
			assert.Equal(t, "6443", pod.env["KUBERNETES_SERVICE_PORT"])
			assert.Equal(t, KubeVIPServiceAccount, pod.spec["serviceAccountName"])
			assert.Equal(t, []any{
				map[string]any{"operator": "Exists", "effect": "NoSchedule"},
				map[string]any{"operator": "Exists", "effect": "NoExecute"},
			}, pod.spec["tolerations"])
			assert.Contains(t, pod.spec["affinity"].(map[string]any)["nodeAffinity"].(map[string]any)["requiredDuringSchedulingIgnoredDuringExecution"].(map[string]any)["nodeSelectorTerms"],
				map[string]any{"matchExpressions": []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}}})
		})
	}
}

func TestKubeVIPDefaultsAndTheDistrosImage(t *testing.T) {
	for _, e := range v1alpha1.Engines {
		t.Run(e, func(t *testing.T) {
			f := kubeVIPFixture(t, e, v1alpha1.VIP{Address: "10.0.0.10"})
			_, pod := renderKubeVIP(t, f, f.input(t, "c1", "c1", false))
			require.NotNil(t, pod)
			assert.Equal(t, f.distro.Spec.Config.KubeVIP.Image, pod.image)
			assert.Equal(t, "32", pod.env["vip_subnet"], "a bare IPv4 address is announced alone")
			assert.Equal(t, "5", pod.env["vip_leaseduration"])
			assert.Equal(t, "3", pod.env["vip_renewdeadline"])
			assert.Equal(t, "1", pod.env["vip_retryperiod"])
			assert.NotContains(t, pod.env, "vip_interface", "no interface known: kube-vip takes the default route's")

			f.cluster.Spec.Config.VIP.Address = "fd00::10"
			_, pod = renderKubeVIP(t, f, f.input(t, "c1", "c1", false))
			assert.Equal(t, "fd00::10", pod.env["address"])
			assert.Equal(t, "128", pod.env["vip_subnet"])
			f.cluster.Spec.Config.VIP.Address = "fd00::10/64"
			_, pod = renderKubeVIP(t, f, f.input(t, "c1", "c1", false))
			assert.Equal(t, "64", pod.env["vip_subnet"])
		})
	}
}

func TestKubeVIPInterfaceFallback(t *testing.T) {
	setIfaces := func(f fixture, ifaces map[string]string) {
		for i := range f.cluster.Spec.Hosts {
			h := &f.cluster.Spec.Hosts[i]
			h.PrivateInterface = ifaces[h.Hostname]
		}
	}
	shared := map[string]string{"c1": "eth1", "c2": "eth1", "c3": "eth1", "w1": "ens3"}
	differ := map[string]string{"c1": "eth1", "c2": "ens192", "c3": "eth1"}
	unknown := map[string]string{"c1": "eth1", "c3": "eth1"}
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := kubeVIPFixture(t, e, v1alpha1.VIP{Address: "10.0.0.10"})
			setIfaces(f, shared)
			_, pod := renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
			assert.Equal(t, "eth1", pod.env["vip_interface"], "the controllers share eth1; workers do not count")
			for name, ifaces := range map[string]map[string]string{"differ": differ, "unknown": unknown} {
				setIfaces(f, ifaces)
				_, pod = renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
				assert.NotContains(t, pod.env, "vip_interface", name)
			}
			f.cluster.Spec.Config.VIP.Interface = "bond0"
			_, pod = renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
			assert.Equal(t, "bond0", pod.env["vip_interface"], "vip.interface wins")
		})
	}
	t.Run(v1alpha1.EngineUpstream, func(t *testing.T) {
		f := kubeVIPFixture(t, v1alpha1.EngineUpstream, v1alpha1.VIP{Address: "10.0.0.10"})
		setIfaces(f, differ)
		_, pod := renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
		assert.Equal(t, "ens192", pod.env["vip_interface"], "a static pod names its own host's interface")
		setIfaces(f, unknown)
		_, pod = renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
		assert.NotContains(t, pod.env, "vip_interface")
		f.cluster.Spec.Config.VIP.Interface = "bond0"
		_, pod = renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
		assert.Equal(t, "bond0", pod.env["vip_interface"], "vip.interface wins")
	})
}

func TestKubeVIPIsTheSameOnEveryController(t *testing.T) {
	for _, e := range rancherEngines {
		f := kubeVIPFixture(t, e, v1alpha1.VIP{Address: "10.0.0.10/24"})
		var first []byte
		for _, h := range []string{"c1", "c2", "c3"} {
			r, err := f.engine.Render(f.input(t, h, "c1", h != "c1"))
			require.NoError(t, err)
			file, ok := r.File(KubeVIPManifestPath(f.engine))
			require.True(t, ok, "%s %s", e, h)
			if first == nil {
				first = file.Content
			}
			assert.Equal(t, string(first), string(file.Content), "%s: %s's manifest differs from c1's", e, h)
		}
	}
}

func TestNoKubeVIPForWorkersKeepalivedOrWithoutAVIP(t *testing.T) {
	cases := map[string]struct {
		vip  *v1alpha1.VIP
		host string
	}{
		"worker":     {&v1alpha1.VIP{Address: "10.0.0.10"}, "w1"},
		"keepalived": {&v1alpha1.VIP{Address: "10.0.0.10", Provider: v1alpha1.VIPKeepalived}, "c2"},
		"no vip":     {nil, "c2"},
	}
	for _, e := range v1alpha1.Engines {
		for name, tc := range cases {
			t.Run(e+"/"+name, func(t *testing.T) {
				f := loadFixture(t, e, "cluster-ha.yaml")
				f.cluster.Spec.Config.VIP = tc.vip
				// Without an image anywhere: nothing asks for one.
				f.distro.Spec.Config.KubeVIP = nil
				r, pod := renderKubeVIP(t, f, f.input(t, tc.host, "c1", true))
				assert.Nil(t, pod)
				for _, file := range r.Files {
					assert.NotContains(t, string(file.Content), "kube-vip", file.Path)
					assert.NotContains(t, string(file.Content), kubeadmPreflightManifests, file.Path)
				}
			})
		}
	}
}

func TestKubeVIPWithoutAnImageIsAnError(t *testing.T) {
	for _, e := range v1alpha1.Engines {
		t.Run(e, func(t *testing.T) {
			f := kubeVIPFixture(t, e, v1alpha1.VIP{Address: "10.0.0.10"})
			f.distro.Spec.Config.KubeVIP = nil
			_, err := f.engine.Render(f.input(t, "c2", "c1", true))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "c2: ")
			assert.Contains(t, err.Error(), "spec.config.vip.kubeVip.image")
			assert.Contains(t, err.Error(), "spec.config.kubeVip.image")

			f.distro.Spec.Config.KubeVIP = &v1alpha1.DistroKubeVIP{}
			_, err = f.engine.Render(f.input(t, "c2", "c1", true))
			require.Error(t, err, "an empty distro image is none")

			f.cluster.Spec.Config.VIP.KubeVIP = &v1alpha1.KubeVIP{Image: "ghcr.io/kube-vip/kube-vip:v1.2.3"}
			_, pod := renderKubeVIP(t, f, f.input(t, "c2", "c1", true))
			require.NotNil(t, pod)
			assert.Equal(t, "ghcr.io/kube-vip/kube-vip:v1.2.3", pod.image, "the cluster's image is enough")
		})
	}
}

func TestKubeVIPRefusesAnAddressThatIsNoIP(t *testing.T) {
	f := kubeVIPFixture(t, v1alpha1.EngineK3s, v1alpha1.VIP{Address: "vip.example.com"})
	_, err := f.engine.Render(f.input(t, "c1", "c1", false))
	require.ErrorContains(t, err, `spec.config.vip.address "vip.example.com" is not an IP address`)
}

// kubeconfigOf is the host file a static pod mounts as kube-vip's kubeconfig.
func kubeconfigOf(t *testing.T, pod *kubeVIPPod) string {
	t.Helper()
	require.NotNil(t, pod)
	vols := pod.spec["volumes"].([]any)
	require.Len(t, vols, 1)
	hp := vols[0].(map[string]any)["hostPath"].(map[string]any)
	assert.Equal(t, "File", hp["type"], "never a directory the runtime creates")
	mount := pod.spec["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any)[0].(map[string]any)
	assert.Equal(t, "/etc/kubernetes/admin.conf", mount["mountPath"], "where kube-vip looks")
	return hp["path"].(string)
}

func TestKubeadmKubeVIPKubeconfigAndPreflight(t *testing.T) {
	f := kubeVIPFixture(t, v1alpha1.EngineUpstream, v1alpha1.VIP{Address: "10.0.0.10"})

	founder := f.input(t, "c1", "c1", false)
	r, pod := renderKubeVIP(t, f, founder)
	assert.Equal(t, "/etc/kubernetes/super-admin.conf", kubeconfigOf(t, pod), "1.29+: admin.conf has no rights during init")
	assert.NotContains(t, kubeadmDocs(t, r)["InitConfiguration"]["nodeRegistration"], "ignorePreflightErrors",
		"kubeadm init checks only its own manifests")

	founded := founder
	founded.ClusterExists = true
	ra, _ := renderKubeVIP(t, f, founded)
	after, ok := ra.File(KubeVIPStaticPodPath)
	require.True(t, ok)
	assert.Equal(t, KubeVIPStaticPodPath, after.Path)
	assert.Contains(t, string(after.Content), "path: /etc/kubernetes/admin.conf")
	assert.NotContains(t, string(after.Content), "super-admin")
	before, _ := r.File(KubeVIPStaticPodPath)
	assert.Equal(t, strings.Replace(string(before.Content), superAdminConf, adminConf, 1), string(after.Content),
		"only the kubeconfig changes")

	joiner := f.input(t, "c2", "c1", true)
	r, pod = renderKubeVIP(t, f, joiner)
	assert.Equal(t, "/etc/kubernetes/admin.conf", kubeconfigOf(t, pod), "a joining controller has no super-admin.conf")
	reg := kubeadmDocs(t, r)["JoinConfiguration"]["nodeRegistration"].(map[string]any)
	assert.Equal(t, []any{kubeadmPreflightManifests}, reg["ignorePreflightErrors"],
		"kube-vip's static pod is in the manifests directory kubeadm join wants empty")

	// The config's own list is kept, and the check not named twice.
	f.distro.Spec.Config.Engine.Config["joinConfiguration"] = mustYAML(t, `
nodeRegistration:
  ignorePreflightErrors:
    - Swap
    - dirAvailable--etc-kubernetes-manifests
`)
	r, _ = renderKubeVIP(t, f, joiner)
	reg = kubeadmDocs(t, r)["JoinConfiguration"]["nodeRegistration"].(map[string]any)
	assert.Equal(t, []any{"Swap", "dirAvailable--etc-kubernetes-manifests"}, reg["ignorePreflightErrors"])

	// Before 1.29 admin.conf works during init too.
	f.distro.Spec.Version = "1.28.9"
	_, pod = renderKubeVIP(t, f, founder)
	assert.Equal(t, "/etc/kubernetes/admin.conf", kubeconfigOf(t, pod))
}

// kubeVIPDocs are the documents of the k3s or rke2 kube-vip manifest.
func kubeVIPDocs(t *testing.T, f fixture) []map[string]any {
	t.Helper()
	r, err := f.engine.Render(f.input(t, "c1", "c1", false))
	require.NoError(t, err)
	file, ok := r.File(KubeVIPManifestPath(f.engine))
	require.True(t, ok)
	var docs []map[string]any
	for _, part := range strings.Split(string(file.Content), "\n---\n") {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(part), &doc))
		docs = append(docs, doc)
	}
	return docs
}

// kube-vip's ServiceAccount may touch its own lease and nothing else
// (issue 39): a Role in kube-system, get and update by the lease's name,
// create alone since RBAC cannot name what is created, no cluster-wide
// role, and none of the services, endpoints or nodes rights of the modes
// cargoship never turns on.
func TestKubeVIPRBACIsItsLeaseOnly(t *testing.T) {
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := kubeVIPFixture(t, e, v1alpha1.VIP{Address: "10.0.0.10"})
			kinds := map[string]map[string]any{}
			var pod map[string]any
			for _, doc := range kubeVIPDocs(t, f) {
				kind := doc["kind"].(string)
				assert.NotContains(t, []string{"ClusterRole", "ClusterRoleBinding"}, kind, "nothing cluster-wide")
				require.NotContains(t, kinds, kind, "one %s", kind)
				kinds[kind] = doc
				if kind == "DaemonSet" {
					pod = doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				}
				assert.Equal(t, KubeVIPNamespace, doc["metadata"].(map[string]any)["namespace"], "%s in kube-vip's namespace", kind)
			}
			for _, kind := range []string{"Role", "RoleBinding"} {
				_, ok := kinds[kind]
				require.True(t, ok, "a %s", kind)
			}

			var rules []map[string]any
			for _, r := range kinds["Role"]["rules"].([]any) {
				rules = append(rules, r.(map[string]any))
			}
			assert.Equal(t, []map[string]any{
				{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "resourceNames": []any{KubeVIPLease}, "verbs": []any{"get", "update"}},
				{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "verbs": []any{"create"}},
			}, rules, "the lease by name; create alone")

			rb := kinds["RoleBinding"]
			assert.Equal(t, map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": kinds["Role"]["metadata"].(map[string]any)["name"]}, rb["roleRef"])
			assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": pod["serviceAccountName"], "namespace": KubeVIPNamespace}}, rb["subjects"],
				"bound to the DaemonSet's ServiceAccount")

			// The Role names the lease kube-vip is told to take, where it takes it.
			env := map[string]any{}
			for _, v := range pod["containers"].([]any)[0].(map[string]any)["env"].([]any) {
				env[v.(map[string]any)["name"].(string)] = v.(map[string]any)["value"]
			}
			assert.Equal(t, KubeVIPLease, env["vip_leasename"])
			assert.Equal(t, KubeVIPNamespace, env["cp_namespace"])
			for _, k := range []string{"svc_enable", "enable_node_labeling", "vip_routingtable", "lb_enable", "bgp_enable"} {
				assert.NotContains(t, env, k, "a mode whose API calls the Role does not allow")
			}
		})
	}
}

// Retiring kube-vip deletes every object its manifest makes, and the
// ClusterRole and binding earlier releases made.
func TestKubeVIPObjectsNameWhatTheManifestMakes(t *testing.T) {
	f := kubeVIPFixture(t, v1alpha1.EngineK3s, v1alpha1.VIP{Address: "10.0.0.10"})
	resource := map[string]string{
		"DaemonSet": "daemonset.apps", "ServiceAccount": "serviceaccount",
		"Role": "role.rbac.authorization.k8s.io", "RoleBinding": "rolebinding.rbac.authorization.k8s.io",
	}
	var made []string
	for _, doc := range kubeVIPDocs(t, f) {
		r, ok := resource[doc["kind"].(string)]
		require.True(t, ok, "a kind KubeVIPObjects knows: %s", doc["kind"])
		made = append(made, r+"/"+doc["metadata"].(map[string]any)["name"].(string))
	}
	assert.ElementsMatch(t, append(made,
		"clusterrole.rbac.authorization.k8s.io/system:kube-vip-role",
		"clusterrolebinding.rbac.authorization.k8s.io/system:kube-vip-binding",
	), KubeVIPObjects())
}
