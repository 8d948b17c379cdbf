package apiserver

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// testAPI is an apiserver over TLS with an admin client (system:masters,
// as the admin kubeconfig's certificate) and an anonymous one.
type testAPI struct {
	url         string
	admin, anon *http.Client
	foreign     *http.Client // a certificate another cluster's CA signed
	store       *store.Store
}

func newTestAPI(t *testing.T) *testAPI { return newTestAPIWith(t, false) }

// newTestAPIWith is newTestAPI with anonymous-auth set to anonymous.
func newTestAPIWith(t *testing.T, anonymous bool) *testAPI {
	t.Helper()
	ca, err := pki.NewCA("k3s-client-ca")
	require.NoError(t, err)
	st, err := store.Open("", "srv1")
	require.NoError(t, err)
	for _, ns := range []string{"default", "kube-system"} {
		_, err := st.Create(store.Key{Resource: "namespaces", Name: ns}, kube.Object{"metadata": map[string]any{"name": ns}})
		require.NoError(t, err)
	}
	srv := httptest.NewUnstartedServer(&Server{Store: st, ClientCA: ca.Pool(), Version: "v1.35.3+k3s1", Anonymous: anonymous})
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	certPEM, keyPEM, err := ca.Issue(pki.Leaf{CommonName: "system:admin", Organization: []string{"system:masters"}})
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	client := func(certs ...tls.Certificate) *http.Client {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = certs
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	other, err := pki.NewCA("another-cluster")
	require.NoError(t, err)
	foreignPEM, foreignKey, err := other.Issue(pki.Leaf{CommonName: "system:admin", Organization: []string{"system:masters"}})
	require.NoError(t, err)
	foreign, err := tls.X509KeyPair(foreignPEM, foreignKey)
	require.NoError(t, err)
	return &testAPI{url: srv.URL, admin: client(cert), anon: client(), foreign: client(foreign), store: st}
}

// do sends body (a JSON string) and returns the status and the raw answer.
func (a *testAPI) do(t *testing.T, c *http.Client, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func decode(t *testing.T, s string) kube.Object {
	t.Helper()
	var o kube.Object
	require.NoError(t, json.NewDecoder(bytes.NewReader([]byte(s))).Decode(&o), s)
	return o
}

// /readyz, /livez and /healthz answer an authenticated client and give
// an anonymous one the 401 every path gives it (anonymous-auth=false).
func TestHealthEndpoints(t *testing.T) {
	a := newTestAPI(t)
	for _, p := range []string{"/readyz", "/livez", "/healthz"} {
		code, body := a.do(t, a.admin, http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusOK, code, p)
		assert.Equal(t, "ok", body, p)
		code, body = a.do(t, a.anon, http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusUnauthorized, code, p)
		assert.Equal(t, "Unauthorized", decode(t, body)["message"], p)
	}
	_, body := a.do(t, a.admin, http.MethodGet, "/readyz?verbose", "", "")
	assert.Equal(t, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\nreadyz check passed\n", body)
	code, body := a.do(t, a.admin, http.MethodGet, "/livez/etcd", "", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, _ = a.do(t, a.admin, http.MethodGet, "/readyz/no-such-check", "", "")
	assert.Equal(t, http.StatusNotFound, code)
}

// With kube-apiserver-arg anonymous-auth=true a client without
// credentials is system:anonymous: it may read the health endpoints and
// /version (system:public-info-viewer) and nothing else; a certificate
// the client CA did not sign is still a 401.
func TestAnonymousAuthOn(t *testing.T) {
	a := newTestAPIWith(t, true)
	for _, p := range []string{"/readyz", "/livez", "/healthz"} {
		code, body := a.do(t, a.anon, http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusOK, code, p)
		assert.Equal(t, "ok", body, p)
	}
	code, _ := a.do(t, a.anon, http.MethodGet, "/version", "", "")
	assert.Equal(t, http.StatusOK, code)
	code, body := a.do(t, a.anon, http.MethodGet, "/api", "", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, `forbidden: User "system:anonymous" cannot get path "/api"`, decode(t, body)["message"])
	code, body = a.do(t, a.anon, http.MethodGet, "/api/v1/nodes", "", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, `nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope`, decode(t, body)["message"])
	code, body = a.do(t, a.anon, http.MethodGet, "/apis/apps/v1/namespaces/kube-system/daemonsets/x", "", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, `daemonsets.apps "x" is forbidden: User "system:anonymous" cannot get resource "daemonsets" in API group "apps" in the namespace "kube-system"`, decode(t, body)["message"])
	code, _ = a.do(t, a.foreign, http.MethodGet, "/readyz", "", "")
	assert.Equal(t, http.StatusUnauthorized, code)

	off := newTestAPI(t)
	code, _ = off.do(t, off.foreign, http.MethodGet, "/readyz", "", "")
	assert.Equal(t, http.StatusUnauthorized, code)
}

// The OpenAPI v3 documents say each kind's PATCH takes fieldValidation,
// the question kubectl's --validate=strict asks (openapi.go).
func TestOpenAPIV3NamesEveryKindsPatchWithFieldValidation(t *testing.T) {
	a := newTestAPI(t)
	code, body := a.do(t, a.admin, http.MethodGet, "/openapi/v3", "", "")
	require.Equal(t, http.StatusOK, code, body)
	var disco struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &disco))
	seen := map[string]bool{}
	for gvPath, gv := range disco.Paths {
		require.True(t, strings.HasPrefix(gv.ServerRelativeURL, "/openapi/v3/"+gvPath+"?hash="), gv.ServerRelativeURL)
		code, body := a.do(t, a.admin, http.MethodGet, gv.ServerRelativeURL, "", "")
		require.Equal(t, http.StatusOK, code, body)
		var doc struct {
			OpenAPI string `json:"openapi"`
			Paths   map[string]struct {
				Patch struct {
					Parameters []struct{ Name, In string } `json:"parameters"`
					GVK        map[string]string           `json:"x-kubernetes-group-version-kind"`
				} `json:"patch"`
			} `json:"paths"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &doc))
		assert.Equal(t, "3.0.0", doc.OpenAPI)
		for p, op := range doc.Paths {
			assert.Contains(t, op.Patch.Parameters, struct{ Name, In string }{"fieldValidation", "query"}, p)
			assert.True(t, strings.HasPrefix(p, "/"+gvPath+"/"), p)
			seen[op.Patch.GVK["group"]+"/"+op.Patch.GVK["version"]+"/"+op.Patch.GVK["kind"]] = true
		}
	}
	for _, r := range resources {
		assert.True(t, seen[r.group+"/v1/"+r.kind], "%s has a PATCH operation", r.kind)
	}
	code, _ = a.do(t, a.admin, http.MethodGet, "/openapi/v3/apis/example.com/v1", "", "")
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = a.do(t, a.admin, http.MethodGet, "/openapi/v2", "", "")
	assert.Equal(t, http.StatusNotFound, code, "no v2: kubectl 1.29 and later need only v3")
}

// Discovery lists the groups of the table and each group's kinds; the
// store keys objects by plural name alone, so no two groups may share one.
func TestDiscoveryListsTheNewGroups(t *testing.T) {
	a := newTestAPI(t)
	_, body := a.do(t, a.admin, http.MethodGet, "/apis", "", "")
	var groups struct {
		Groups []struct{ Name string } `json:"groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &groups))
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"apps", "policy", "rbac.authorization.k8s.io", "coordination.k8s.io", "helm.cattle.io"}, names)
	_, body = a.do(t, a.admin, http.MethodGet, "/apis/helm.cattle.io/v1", "", "")
	assert.Contains(t, body, `"name":"helmchartconfigs"`)
	assert.Contains(t, body, `"kind":"HelmChart"`)

	plural := map[string]string{}
	for _, r := range resources {
		_, dup := plural[r.name]
		assert.False(t, dup, "%s is served by %q and %q", r.name, plural[r.name], r.group)
		plural[r.name] = r.group
	}
}

// NamespaceLifecycle: nothing is created in a namespace that does not
// exist; a new namespace gets the apiserver's label, finalizer and phase;
// a cluster-scoped object keeps no namespace.
func TestCreate(t *testing.T) {
	a := newTestAPI(t)
	code, body := a.do(t, a.admin, http.MethodPost, "/api/v1/namespaces/cni/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, `namespaces "cni" not found`, decode(t, body)["message"])

	code, body = a.do(t, a.admin, http.MethodPost, "/api/v1/namespaces", "application/json", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"cni"}}`)
	require.Equal(t, http.StatusCreated, code, body)
	ns := decode(t, body)
	assert.Equal(t, "cni", kube.StrMap(ns, "metadata.labels")["kubernetes.io/metadata.name"])
	assert.Equal(t, []any{"kubernetes"}, kube.Get(ns, "spec.finalizers"))
	assert.Equal(t, "Active", kube.Str(ns, "status.phase"))

	code, body = a.do(t, a.admin, http.MethodPost, "/api/v1/namespaces/cni/configmaps?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
	require.Equal(t, http.StatusCreated, code, body)
	assert.Nil(t, kube.Get(decode(t, body), "metadata.generation"), "a ConfigMap has no generation")

	code, body = a.do(t, a.admin, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", "application/json", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r","namespace":"cni"},"rules":[]}`)
	require.Equal(t, http.StatusCreated, code, body)
	assert.Empty(t, kube.Str(decode(t, body), "metadata.namespace"))
}

// fieldValidation and fieldManager are checked as the apiserver checks
// CreateOptions and PatchOptions.
func TestWriteOptionsAreValidated(t *testing.T) {
	a := newTestAPI(t)
	for _, fv := range []string{"Strict", "Warn", "Ignore", ""} {
		code, body := a.do(t, a.admin, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldValidation="+fv, "application/json", `{"metadata":{"name":"c`+strings.ToLower(fv)+`"}}`)
		assert.Equal(t, http.StatusCreated, code, "%s: %s", fv, body)
	}
	code, body := a.do(t, a.admin, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldValidation=strict", "application/json", `{"metadata":{"name":"x"}}`)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"`, decode(t, body)["message"])
	code, body = a.do(t, a.admin, http.MethodPatch, "/api/v1/namespaces/default/configmaps/cstrict?fieldManager="+strings.Repeat("m", 129), "application/merge-patch+json", `{}`)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`, decode(t, body)["message"])
}

// A custom resource takes merge patches, not strategic ones (415, as for
// every custom resource); a built-in kind's strategic merge patch merges
// its containers by name; metadata.generation counts spec changes.
func TestPatchTypesAndGeneration(t *testing.T) {
	a := newTestAPI(t)
	code, body := a.do(t, a.admin, http.MethodPost, "/apis/helm.cattle.io/v1/namespaces/kube-system/helmchartconfigs", "application/json",
		`{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"rke2-canal"},"spec":{"valuesContent":"a: 1"}}`)
	require.Equal(t, http.StatusCreated, code, body)
	assert.InDelta(t, 1, kube.Get(decode(t, body), "metadata.generation"), 0)
	code, body = a.do(t, a.admin, http.MethodPatch, "/apis/helm.cattle.io/v1/namespaces/kube-system/helmchartconfigs/rke2-canal", "application/strategic-merge-patch+json", `{"spec":{"valuesContent":"a: 2"}}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, code)
	assert.Equal(t, "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json", decode(t, body)["message"])
	code, body = a.do(t, a.admin, http.MethodPatch, "/apis/helm.cattle.io/v1/namespaces/kube-system/helmchartconfigs/rke2-canal", "application/merge-patch+json", `{"spec":{"valuesContent":"a: 2"}}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "a: 2", kube.Str(decode(t, body), "spec.valuesContent"))
	assert.InDelta(t, 2, kube.Get(decode(t, body), "metadata.generation"), 0)

	ds := `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"cni","generation":7},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}}`
	code, body = a.do(t, a.admin, http.MethodPost, "/apis/apps/v1/namespaces/kube-system/daemonsets", "application/json", ds)
	require.Equal(t, http.StatusCreated, code, body)
	assert.InDelta(t, 1, kube.Get(decode(t, body), "metadata.generation"), 0, "the server sets generation, not the client")
	path := "/apis/apps/v1/namespaces/kube-system/daemonsets/cni"
	_, body = a.do(t, a.admin, http.MethodPatch, path, "application/strategic-merge-patch+json", `{"metadata":{"labels":{"x":"y"}}}`)
	assert.InDelta(t, 1, kube.Get(decode(t, body), "metadata.generation"), 0, "a metadata change is no new generation")
	code, body = a.do(t, a.admin, http.MethodPatch, path, "application/strategic-merge-patch+json",
		`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"a","image":"a:2"}]}}}}`)
	require.Equal(t, http.StatusOK, code, body)
	got := decode(t, body)
	assert.InDelta(t, 2, kube.Get(got, "metadata.generation"), 0)
	assert.Equal(t, []any{map[string]any{"name": "a", "image": "a:2"}, map[string]any{"name": "b", "image": "b:1"}}, kube.Get(got, "spec.template.spec.containers"))
	_, body = a.do(t, a.admin, http.MethodPut, path+"/status", "application/json", `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"cni"},"status":{"numberReady":1}}`)
	assert.InDelta(t, 2, kube.Get(decode(t, body), "metadata.generation"), 0, "a status update is no new generation")
}
