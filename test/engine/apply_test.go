package testengine_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/test/engine/internal/deploy"
)

// cniManifest is a CNI manifest's kinds, as cargoship's phase 21 applies
// one; image and mtu are what the rounds change.
func cniManifest(image, mtu string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: cni
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: cni-agent
  namespace: cni
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cni-agent
rules:
  - apiGroups: [""]
    resources: [nodes, pods, namespaces]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cni-agent
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cni-agent
subjects:
  - kind: ServiceAccount
    name: cni-agent
    namespace: cni
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cni-config
  namespace: cni
data:
  mtu: "%[2]s"
  backend: vxlan
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cni-agent
  namespace: cni
  labels:
    app: cni-agent
spec:
  selector:
    matchLabels:
      app: cni-agent
  template:
    metadata:
      labels:
        app: cni-agent
    spec:
      serviceAccountName: cni-agent
      hostNetwork: true
      tolerations:
        - operator: Exists
      containers:
        - name: agent
          image: %[1]s
          env:
            - name: MTU
              value: "%[2]s"
        - name: monitor
          image: registry.invalid/cni-monitor:1
`, image, mtu)
}

// kubectl apply -f FILE as cargoship's phase 21 runs it, with the admin
// kubeconfig and the real kubectl: a first apply creates every object
// with its last-applied configuration, a changed file configures the
// object that changed (a strategic merge patch, merged by container name)
// and leaves the others unchanged, the same file again changes nothing.
func TestK3sKubectlApplyAManifestTwice(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: tok\n", ip(2)))
	srv.start(bin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})
	cache := "--cache-dir=" + t.TempDir() // no discovery from another run's engine
	file := filepath.Join(t.TempDir(), "21-cni.yaml")
	apply := func(content string, extra ...string) string {
		t.Helper()
		require.NoError(t, os.WriteFile(file, []byte(content), 0o600))
		return mustKubectl(t, kc, append([]string{cache, "apply", "-f", file}, extra...)...)
	}

	assert.Equal(t, `namespace/cni created
serviceaccount/cni-agent created
clusterrole.rbac.authorization.k8s.io/cni-agent created
clusterrolebinding.rbac.authorization.k8s.io/cni-agent created
configmap/cni-config created
daemonset.apps/cni-agent created
`, apply(cniManifest("registry.invalid/cni:1.0", "1450")))

	t.Run("kubectl get reads back each object", func(t *testing.T) {
		var got struct {
			Items []map[string]any `json:"items"`
		}
		out := mustKubectl(t, kc, cache, "get", "-f", file, "-o", "json")
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.Len(t, got.Items, 6)
		kinds := []string{}
		for _, it := range got.Items {
			kinds = append(kinds, it["kind"].(string))
			ann := it["metadata"].(map[string]any)["annotations"].(map[string]any)
			assert.Contains(t, ann["kubectl.kubernetes.io/last-applied-configuration"], `"kind":"`+it["kind"].(string)+`"`)
		}
		assert.Equal(t, []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"}, kinds)
		assert.Equal(t, "1450", mustKubectl(t, kc, cache, "get", "configmap", "-n", "cni", "cni-config", "-o", "jsonpath={.data.mtu}"))
		assert.Equal(t, "cni-agent", mustKubectl(t, kc, cache, "get", "clusterrolebinding", "cni-agent", "-o", "jsonpath={.subjects[0].name}"))
		assert.Equal(t, "get list watch", strings.TrimSpace(mustKubectl(t, kc, cache, "get", "clusterrole", "cni-agent", "-o", `jsonpath={range .rules[0].verbs[*]}{@} {end}`)))
		assert.Equal(t, "registry.invalid/cni:1.0 registry.invalid/cni-monitor:1",
			mustKubectl(t, kc, cache, "get", "daemonset", "-n", "cni", "cni-agent", "-o", "jsonpath={.spec.template.spec.containers[*].image}"))
		assert.Equal(t, "cni", mustKubectl(t, kc, cache, "get", "namespace", "cni", "-o", `jsonpath={.metadata.labels.kubernetes\.io/metadata\.name}`))
		assert.Equal(t, "serviceaccount/cni-agent\n", mustKubectl(t, kc, cache, "get", "serviceaccount", "-n", "cni", "-o", "name"))
	})

	t.Run("a changed DaemonSet is configured, the rest unchanged", func(t *testing.T) {
		log := apply(cniManifest("registry.invalid/cni:1.1", "1450"), "-v=8")
		var lines []string
		for _, l := range strings.Split(log, "\n") {
			if strings.HasSuffix(l, " configured") || strings.HasSuffix(l, " unchanged") || strings.HasSuffix(l, " created") {
				lines = append(lines, l)
			}
		}
		assert.Equal(t, []string{
			"namespace/cni unchanged", "serviceaccount/cni-agent unchanged",
			"clusterrole.rbac.authorization.k8s.io/cni-agent unchanged", "clusterrolebinding.rbac.authorization.k8s.io/cni-agent unchanged",
			"configmap/cni-config unchanged", "daemonset.apps/cni-agent configured",
		}, lines)
		// One write, a strategic merge patch validated on the server.
		assert.Equal(t, 1, strings.Count(log, "] PATCH https://"), log)
		assert.Contains(t, log, "PATCH https://"+ip(2)+":6443/apis/apps/v1/namespaces/cni/daemonsets/cni-agent?fieldManager=kubectl-client-side-apply&fieldValidation=Strict")
		assert.Contains(t, log, "Content-Type: application/strategic-merge-patch+json")
		assert.NotContains(t, log, "POST https://")
		assert.Equal(t, "registry.invalid/cni:1.1 registry.invalid/cni-monitor:1",
			mustKubectl(t, kc, cache, "get", "daemonset", "-n", "cni", "cni-agent", "-o", "jsonpath={.spec.template.spec.containers[*].image}"),
			"the patch names one container; the other stays")
		assert.Equal(t, "2", mustKubectl(t, kc, cache, "get", "daemonset", "-n", "cni", "cni-agent", "-o", "jsonpath={.metadata.generation}"))
	})

	t.Run("the same file again is unchanged", func(t *testing.T) {
		out := apply(cniManifest("registry.invalid/cni:1.1", "1450"))
		assert.Equal(t, 6, strings.Count(out, " unchanged\n"), out)
		assert.NotContains(t, out, "configured")
	})

	t.Run("a HelmChartConfig (a custom resource) is patched with a JSON merge patch", func(t *testing.T) {
		hcc := func(iface string) string {
			return "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n  name: rke2-canal\n  namespace: kube-system\nspec:\n  valuesContent: |-\n    flannel:\n      iface: " + iface + "\n"
		}
		assert.Equal(t, "helmchartconfig.helm.cattle.io/rke2-canal created\n", apply(hcc("eth0")))
		log := apply(hcc("eth1"), "-v=8")
		assert.Contains(t, log, "helmchartconfig.helm.cattle.io/rke2-canal configured")
		assert.Contains(t, log, "Content-Type: application/merge-patch+json")
		assert.Equal(t, "flannel:\n  iface: eth1", mustKubectl(t, kc, cache, "get", "helmchartconfig", "-n", "kube-system", "rke2-canal", "-o", "jsonpath={.spec.valuesContent}"))
	})

	t.Run("an object in a namespace that does not exist is refused", func(t *testing.T) {
		require.NoError(t, os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: nowhere\n"), 0o600))
		out, err := kubectl(t, kc, cache, "apply", "-f", file)
		require.Error(t, err)
		assert.Contains(t, out, `namespaces "nowhere" not found`)
	})
}

// The health endpoints a keepalived check script calls with the admin
// kubeconfig (kubectl get --raw /readyz): ok for the admin; 401 for a
// client without a certificate, as k3s runs the apiserver with
// anonymous-auth=false.
func TestK3sHealthEndpointsNeedAuthentication(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: tok\n", ip(2)))
	srv.start(bin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})

	for _, p := range []string{"/readyz", "/livez", "/healthz"} {
		assert.Equal(t, "ok", mustKubectl(t, kc, "get", "--raw", p), p)
	}
	assert.Contains(t, mustKubectl(t, kc, "get", "--raw", "/readyz?verbose"), "readyz check passed")

	// The server's CA but no client certificate.
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM([]byte(srv.readFile("/var/lib/rancher/k3s/server/tls/server-ca.crt"))))
	anon := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for _, p := range []string{"/readyz", "/livez", "/healthz"} {
		resp, err := anon.Get("https://" + ip(2) + ":6443" + p)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
		assert.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`, string(body), p)
	}
}

// Auto-deploying manifests on both engines: a file in
// <data-dir>/server/manifests at start is applied; one dropped in later
// appears within the poll interval; a changed file updates its objects;
// a HelmChartConfig is stored; an object of a kind the API does not serve
// is reported with the deploy controller's message while the file's
// other objects are applied.
func TestAutoDeployManifests(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	for _, tc := range []struct{ engine, version string }{{"k3s", k3sOld}, {"rke2", rke2Ver}} {
		t.Run(tc.engine, func(t *testing.T) {
			bin := engineBinary(t, tc.engine, tc.version)
			ip := ips(t)
			srv := newNode(t, tc.engine, "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: tok\n", ip(2)))
			dir := "/var/lib/rancher/" + tc.engine + "/server/manifests/"
			srv.writeFile(dir+"early.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: early\n  namespace: kube-system\ndata:\n  at: start\n", 0o600)
			srv.start(bin, "server")
			kc := srv.kubeconfig()
			waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})
			cache := "--cache-dir=" + t.TempDir()
			get := func(args ...string) (string, error) {
				return kubectl(t, kc, append([]string{cache, "get"}, args...)...)
			}
			within := 2*deploy.Interval + 5*time.Second

			eventually(t, within, "the file there at start is applied", func() error {
				out, err := get("configmap", "-n", "kube-system", "early", "-o", "jsonpath={.data.at}")
				return outputIs(out, err, "start")
			})

			vip := func(image string) string {
				return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: kube-vip
  namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-vip-ds
  namespace: kube-system
spec:
  selector:
    matchLabels: {name: kube-vip-ds}
  template:
    metadata:
      labels: {name: kube-vip-ds}
    spec:
      serviceAccountName: kube-vip
      containers:
        - name: kube-vip
          image: %s
          args: [manager]
---
apiVersion: helm.cattle.io/v1
kind: HelmChartConfig
metadata:
  name: rke2-canal
  namespace: kube-system
spec:
  valuesContent: |-
    flannel:
      iface: eth1
`, image)
			}
			dropped := time.Now()
			srv.writeFile(dir+"cargoship-kube-vip.yaml", vip("registry.invalid/kube-vip:v1"), 0o600)
			eventually(t, within, "a dropped file is applied", func() error {
				out, err := get("daemonset", "-n", "kube-system", "kube-vip-ds", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
				return outputIs(out, err, "registry.invalid/kube-vip:v1")
			})
			t.Logf("applied %s after the file was written", time.Since(dropped).Round(100*time.Millisecond))
			out, err := get("daemonset", "-n", "kube-system", "kube-vip-ds", "-o", `jsonpath={.metadata.annotations.objectset\.rio\.cattle\.io/owner-name}`)
			require.NoError(t, err)
			assert.Equal(t, "cargoship-kube-vip", out, "owned by the AddOn named after the file")
			out, err = get("helmchartconfig", "-n", "kube-system", "rke2-canal", "-o", "jsonpath={.spec.valuesContent}")
			require.NoError(t, err, out)
			assert.Equal(t, "flannel:\n  iface: eth1", out, "the HelmChartConfig is stored")

			srv.writeFile(dir+"cargoship-kube-vip.yaml", vip("registry.invalid/kube-vip:v2"), 0o600)
			eventually(t, within, "a changed file updates its objects", func() error {
				out, err := get("daemonset", "-n", "kube-system", "kube-vip-ds", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
				return outputIs(out, err, "registry.invalid/kube-vip:v2")
			})

			srv.writeFile(dir+"widgets.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beside-the-widget\n  namespace: kube-system\n", 0o600)
			eventually(t, within, "an unsupported kind is reported and skipped", func() error {
				if !strings.Contains(srv.logText(), `level=error msg="Failed to process config: failed to process `+srv.path(dir+"widgets.yaml")+`: the server could not find the requested resource"`) {
					return fmt.Errorf("no error logged for widgets.yaml")
				}
				_, err := get("configmap", "-n", "kube-system", "beside-the-widget")
				return err
			})
		})
	}
}

// outputIs is nil when kubectl succeeded and printed want.
func outputIs(out string, err error, want string) error {
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	if out != want {
		return fmt.Errorf("printed %q, want %q", out, want)
	}
	return nil
}
