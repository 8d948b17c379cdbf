package deploy

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/apiserver"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

const dir = "/var/lib/rancher/k3s/server/manifests"

// setup runs an apiserver over TLS and a Watcher of dir, under a root of
// its own, as the admin.
func setup(t *testing.T) (*Watcher, *store.Store) {
	t.Helper()
	t.Setenv(hostfs.RootEnv, t.TempDir())
	require.NoError(t, hostfs.MkdirAll(dir, 0o700))
	ca, err := pki.NewCA("k3s-client-ca")
	require.NoError(t, err)
	st, err := store.Open("", "srv1")
	require.NoError(t, err)
	for _, ns := range []string{"default", "kube-system"} {
		_, err := st.Create(store.Key{Resource: "namespaces", Name: ns}, kube.Object{"metadata": map[string]any{"name": ns}})
		require.NoError(t, err)
	}
	srv := httptest.NewUnstartedServer(&apiserver.Server{Store: st, ClientCA: ca.Pool(), Version: "v1.35.3+k3s1"})
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	certPEM, keyPEM, err := ca.Issue(pki.Leaf{CommonName: "system:admin", Organization: []string{"system:masters"}})
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	t.Cleanup(tr.CloseIdleConnections)
	return &Watcher{Dir: dir, Client: &Client{Base: srv.URL, HTTP: &http.Client{Transport: tr}}}, st
}

// write puts a manifest in the directory with a modification time of its
// own, as an edit a second later would have.
func write(t *testing.T, name, content string, age time.Duration) {
	t.Helper()
	p := hostfs.Path(filepath.Join(dir, name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	mt := time.Now().Add(-age)
	require.NoError(t, os.Chtimes(p, mt, mt))
}

func get(st *store.Store, resource, ns, name string) (kube.Object, bool) {
	return st.Get(store.Key{Resource: resource, Namespace: ns, Name: name})
}

const cni = `# a CNI, as a vendor ships it
apiVersion: v1
kind: Namespace
metadata:
  name: cni
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cni-config
  namespace: cni
data:
  mtu: "1450"
---
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cni
  namespace: cni
spec:
  template:
    spec:
      containers:
      - name: agent
        image: cni:1
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
`

// A file's objects are created with the AddOn's owner annotations and
// hash label (the value k3s gives coredns's objects is checked too); an
// edit updates them with a three-way merge that keeps what the server
// set; an object dropped from the file is deleted, unless prune=false.
func TestAFileIsAppliedUpdatedAndPruned(t *testing.T) {
	w, st := setup(t)
	ctx := context.Background()
	write(t, "cni.yaml", cni, 2*time.Second)
	require.NoError(t, w.Pass(ctx, true))

	ds, ok := get(st, "daemonsets", "cni", "cni")
	require.True(t, ok)
	assert.Equal(t, map[string]string{
		annID: "", annOwnerGVK: "k3s.cattle.io/v1, Kind=Addon", annOwnerName: "cni", annOwnerNS: "kube-system",
		annApplied: kube.StrMap(ds, "metadata.annotations")[annApplied],
	}, kube.StrMap(ds, "metadata.annotations"))
	assert.Equal(t, []any{map[string]any{"name": "agent", "image": "cni:1"}}, kube.Get(appliedOf(ds), "spec.template.spec.containers"), "the applied annotation holds what was applied")
	assert.Equal(t, objectSetHash("cni"), kube.StrMap(ds, "metadata.labels")[labelHash])
	assert.Equal(t, "bce283298811743a0386ab510f2f67ef74240c57", objectSetHash("coredns"), "the hash k3s puts on coredns's objects")
	hcc, ok := get(st, "helmchartconfigs", "kube-system", "rke2-canal")
	require.True(t, ok, "a HelmChartConfig is stored")
	assert.Equal(t, "flannel:\n  iface: eth1", kube.Str(hcc, "spec.valuesContent"))

	// Someone else changes the image and sets a field the file does not
	// have. An unchanged file is not applied again: the change stays.
	_, err := st.Update(store.Key{Resource: "daemonsets", Namespace: "cni", Name: "cni"}, func(o kube.Object) (kube.Object, error) {
		kube.Get(o, "spec.template.spec.containers").([]any)[0].(map[string]any)["image"] = "cni:hotfix"
		kube.Set(o, "spec.revisionHistoryLimit", float64(3))
		return o, nil
	})
	require.NoError(t, err)
	require.NoError(t, w.Pass(ctx, false))
	ds, _ = get(st, "daemonsets", "cni", "cni")
	assert.Equal(t, "cni:hotfix", kube.Get(ds, "spec.template.spec.containers").([]any)[0].(map[string]any)["image"])
	// A start (the first pass) applies every file again.
	require.NoError(t, w.Pass(ctx, true))
	ds, _ = get(st, "daemonsets", "cni", "cni")
	assert.Equal(t, "cni:1", kube.Get(ds, "spec.template.spec.containers").([]any)[0].(map[string]any)["image"])

	edited := strings.Replace(strings.Replace(cni, "cni:1", "cni:2", 1), `mtu: "1450"`, `mtu: "1400"`, 1)
	edited, _, _ = strings.Cut(edited, "---\napiVersion: helm.cattle.io")
	write(t, "cni.yaml", edited, time.Second)
	require.NoError(t, w.Pass(ctx, false))
	ds, _ = get(st, "daemonsets", "cni", "cni")
	assert.Equal(t, "cni:2", kube.Get(ds, "spec.template.spec.containers").([]any)[0].(map[string]any)["image"])
	assert.InDelta(t, 3, kube.Get(ds, "spec.revisionHistoryLimit"), 0, "what only the server set stays")
	cm, _ := get(st, "configmaps", "cni", "cni-config")
	assert.Equal(t, "1400", kube.StrMap(cm, "data")["mtu"])
	_, ok = get(st, "helmchartconfigs", "kube-system", "rke2-canal")
	assert.False(t, ok, "the object dropped from the file is deleted")

	// prune=false keeps an object the file no longer holds.
	_, err = st.Update(store.Key{Resource: "configmaps", Namespace: "cni", Name: "cni-config"}, func(o kube.Object) (kube.Object, error) {
		kube.Set(o, "metadata.labels", map[string]any{labelHash: objectSetHash("cni"), labelPrune: "false"})
		return o, nil
	})
	require.NoError(t, err)
	write(t, "cni.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cni\n", 0)
	require.NoError(t, w.Pass(ctx, false))
	_, ok = get(st, "configmaps", "cni", "cni-config")
	assert.True(t, ok)
	_, ok = get(st, "daemonsets", "cni", "cni")
	assert.False(t, ok)
}

// Objects of kinds the API does not serve fail as the real controller
// reports them, the file's other objects are applied, and the whole pass
// is an error (so the next pass applies every file again). A base name
// that is no valid AddOn name fails the file.
func TestUnsupportedKindsAndBadNames(t *testing.T) {
	w, st := setup(t)
	write(t, "mixed.yaml", `apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: v1
kind: Gadget
metadata: {name: g}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kept, namespace: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: nowhere, namespace: missing}
`, 0)
	write(t, "bad_name.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", 0)
	err := w.Pass(context.Background(), true)
	require.Error(t, err)
	mixed := hostfs.Path(filepath.Join(dir, "mixed.yaml"))
	assert.Contains(t, err.Error(), "failed to process "+mixed+": the server could not find the requested resource, failed to discover client for /v1, Kind=Gadget, "+
		`failed to create missing/nowhere /v1, Kind=ConfigMap for  kube-system/mixed: namespaces "missing" not found`)
	assert.Contains(t, err.Error(), "failed to process "+hostfs.Path(filepath.Join(dir, "bad_name.yaml"))+`: Addon.k3s.cattle.io "bad_name" is invalid: metadata.name: Invalid value: "bad_name": a lowercase RFC 1123 subdomain`)
	_, ok := get(st, "configmaps", "kube-system", "kept")
	assert.True(t, ok)
	_, ok = get(st, "configmaps", "default", "b")
	assert.False(t, ok)
}

// What is applied: *.yaml, *.yml and *.json (any case) in the directory
// and below; not dotfiles, not a file a <name>.skip names, nothing else.
func TestWhichFilesAreApplied(t *testing.T) {
	w, st := setup(t)
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: kube-system}\n"
	}
	write(t, "a.yaml", cm("a"), 0)
	write(t, "sub/b.YML", cm("b"), 0)
	write(t, "c.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system"}}]}`, 0)
	write(t, ".d.yaml", cm("d"), 0)
	write(t, "e.yaml", cm("e"), 0)
	write(t, "e.yaml.skip", "", 0)
	write(t, "f.txt", cm("f"), 0)
	require.NoError(t, w.Pass(context.Background(), true))
	for name, want := range map[string]bool{"a": true, "b": true, "c": true, "d": false, "e": false, "f": false} {
		_, ok := get(st, "configmaps", "kube-system", name)
		assert.Equal(t, want, ok, name)
	}
}

func TestParse(t *testing.T) {
	objs, err := parse([]byte("# comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {n: \"1\"}\n--- \n\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "ConfigMap", kube.Str(objs[0], "kind"))
	assert.Equal(t, "b", kube.Str(objs[1], "metadata.name"))
	_, err = parse([]byte("apiVersion: v1\nmetadata: {name: a}\n"))
	require.ErrorContains(t, err, "Object 'Kind' is missing in")
	_, err = parse([]byte("a: [\n"))
	require.Error(t, err)
}
