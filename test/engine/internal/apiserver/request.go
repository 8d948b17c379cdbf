package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// request is a parsed resource request.
type request struct {
	res       resource
	namespace string
	name      string
	sub       string
	verb      string
}

// parseRequest reads the path after /api/v1 or /apis/<group>/v1:
// <res>[/<name>[/<sub>]] or namespaces/<ns>/<res>[/<name>[/<sub>]].
func parseRequest(method, group string, p []string) (request, error) {
	var rq request
	if len(p) >= 3 && p[0] == "namespaces" {
		if r, ok := findResource(group, p[2]); ok && r.namespaced {
			rq.namespace, p = p[1], p[2:]
		}
	}
	res, ok := findResource(group, p[0])
	if !ok {
		return rq, kube.NoSuchPath()
	}
	rq.res = res
	if len(p) > 1 {
		rq.name = p[1]
	}
	if len(p) > 2 {
		rq.sub = p[2]
		if !res.hasSub(rq.sub) || len(p) > 3 {
			return rq, kube.NotFound(res.name, fmt.Sprintf("%s/%s", rq.name, rq.sub))
		}
	}
	if res.namespaced && rq.name != "" && rq.namespace == "" {
		return rq, kube.NotFound(res.name, rq.name)
	}
	rq.verb = verb(method, rq)
	if rq.verb == "" {
		return rq, kube.MethodNotAllowed()
	}
	return rq, nil
}

func verb(method string, rq request) string {
	if rq.name == "" {
		switch method {
		case http.MethodGet:
			return "list"
		case http.MethodPost:
			return "create"
		}
		return ""
	}
	if rq.sub == "eviction" {
		if method == http.MethodPost {
			return "create"
		}
		return ""
	}
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if rq.sub == "" {
			return "delete"
		}
	}
	return ""
}

// authorize is a small RBAC: system:masters may do anything (the admin
// kubeconfig); a kubelet (system:node:<name> in system:nodes) may read
// everything and create and update only its own Node, as the Node
// authorizer and NodeRestriction allow. Everyone else is forbidden.
func authorize(id identity, rq request, watch bool) error {
	if id.in("system:masters") {
		return nil
	}
	v := rq.verb
	if watch {
		v = "watch"
	}
	if id.in("system:nodes") {
		self, _ := strings.CutPrefix(id.user, "system:node:")
		switch {
		case v == "get" || v == "list" || v == "watch":
			return nil
		case rq.res.name == "nodes" && v == "create":
			return nil // the name is checked against the body in create
		case rq.res.name == "nodes" && (v == "update" || v == "patch") && rq.name == self:
			return nil
		}
	}
	scope := "at the cluster scope"
	if rq.namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", rq.namespace)
	}
	res := rq.res.name
	if rq.sub != "" {
		res += "/" + rq.sub
	}
	// The RBAC authorizer's message, behind the qualified resource and
	// the name when there is one.
	what := rq.res.name
	if rq.res.group != "" {
		what += "." + rq.res.group
	}
	if rq.name != "" {
		what += fmt.Sprintf(" %q", rq.name)
	}
	return kube.Forbidden(fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q %s",
		what, id.user, v, res, rq.res.group, scope))
}

// fieldValidations are the fieldValidation values the apiserver takes
// ("" is Warn for a client that sends none).
var fieldValidations = []string{"", "Ignore", "Strict", "Warn"}

// validateOptions checks a write's query options as the apiserver's
// CreateOptions, UpdateOptions and PatchOptions validation does. The
// engine has no schemas, so it cannot report unknown fields whatever the
// directive (docs/test-engine.md).
func validateOptions(rq request, q url.Values) error {
	kind := map[string]string{"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}[rq.verb]
	if kind == "" || rq.sub == "eviction" {
		return nil
	}
	var errs []string
	if fm := q.Get("fieldManager"); len(fm) > 128 {
		errs = append(errs, "fieldManager: Too long: may not be more than 128 bytes")
	}
	if fv := q.Get("fieldValidation"); !slices.Contains(fieldValidations, fv) {
		errs = append(errs, fmt.Sprintf("fieldValidation: Unsupported value: %q: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"", fv))
	}
	if len(errs) == 0 {
		return nil
	}
	msg := errs[0]
	if len(errs) > 1 {
		msg = "[" + strings.Join(errs, ", ") + "]"
	}
	return kube.Invalid(fmt.Sprintf("%s.meta.k8s.io \"\" is invalid: %s", kind, msg))
}
