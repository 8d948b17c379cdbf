package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"unicode"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// The OpenAPI v3 the engine serves is the least kubectl's apply, create
// and replace need. Their default --validate=strict asks /openapi/v3
// whether the kind's PATCH operation takes the fieldValidation query
// parameter; when it does, kubectl validates nothing itself and sends
// fieldValidation=Strict for the server to check. Without an answer
// kubectl falls back to /openapi/v2 and, that missing too, refuses to
// apply ("failed to download openapi"). So each group version's document
// lists, for each kind, its PATCH operation with the
// x-kubernetes-group-version-kind extension and the query parameters, and
// nothing else: no request bodies and no schemas. kubectl apply then
// finds no strategic-merge schema in it and computes its patch from its
// built-in types (JSON merge patch for a custom resource), as it does
// against a server without OpenAPI; kubectl explain finds nothing
// (docs/test-engine.md).

// openAPIPath is the key of a group version in /openapi/v3.
func openAPIPath(group string) string {
	if group == "" {
		return "api/v1"
	}
	return "apis/" + group + "/v1"
}

// openAPIDoc is the document of one group version.
func openAPIDoc(group, version string) ([]byte, bool) {
	paths := map[string]any{}
	for _, r := range resources {
		if r.group != group {
			continue
		}
		p := "/" + openAPIPath(group) + "/"
		if r.namespaced {
			p += "namespaces/{namespace}/"
		}
		p += r.name + "/{name}"
		paths[p] = map[string]any{"patch": map[string]any{
			"description": "partially update the specified " + r.kind,
			"operationId": "patch" + operationGroup(group) + "V1" + map[bool]string{true: "Namespaced"}[r.namespaced] + r.kind,
			"parameters": []any{
				queryParam("dryRun", "string"), queryParam("fieldManager", "string"),
				queryParam("fieldValidation", "string"), queryParam("force", "boolean"),
			},
			"x-kubernetes-action":             "patch",
			"x-kubernetes-group-version-kind": map[string]string{"group": group, "version": "v1", "kind": r.kind},
		}}
	}
	if len(paths) == 0 {
		return nil, false
	}
	b, err := json.Marshal(map[string]any{
		"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes", "version": version},
		"paths": paths, "components": map[string]any{},
	})
	if err != nil {
		panic(err) // only maps of strings reach here
	}
	return b, true
}

func queryParam(name, typ string) map[string]any {
	return map[string]any{"name": name, "in": "query", "schema": map[string]any{"type": typ, "uniqueItems": true}}
}

// operationGroup is a group as the apiserver's operation IDs spell it:
// rbac.authorization.k8s.io is RbacAuthorization, helm.cattle.io
// HelmCattleIo.
func operationGroup(group string) string {
	if group == "" {
		return "Core"
	}
	var b strings.Builder
	for _, w := range strings.FieldsFunc(strings.TrimSuffix(group, ".k8s.io"), func(r rune) bool { return r == '.' || r == '-' }) {
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// openAPI answers /openapi/v3 (where each group version's document is,
// with a hash of it, as the client caches by that URL) and
// /openapi/v3/<group version>.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
	if rest != "" {
		doc, ok := openAPIDoc(groupOfOpenAPIPath(rest), s.Version)
		if !ok {
			writeError(w, kube.NoSuchPath())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
		return
	}
	paths := map[string]any{}
	for _, g := range append([]string{""}, groupVersions...) {
		doc, _ := openAPIDoc(g, s.Version)
		sum := sha256.Sum256(doc)
		paths[openAPIPath(g)] = map[string]string{"serverRelativeURL": "/openapi/v3/" + openAPIPath(g) + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
	}
	writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
}

// groupOfOpenAPIPath is the group of "api/v1" or "apis/<group>/v1"; a
// path of no group served is "-".
func groupOfOpenAPIPath(p string) string {
	if p == "api/v1" {
		return ""
	}
	if g, ok := strings.CutPrefix(p, "apis/"); ok {
		if g, ok := strings.CutSuffix(g, "/v1"); ok && knownGroup(g) {
			return g
		}
	}
	return "-"
}
