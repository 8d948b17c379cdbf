package apiserver

import "github.com/colonel-byte/cargoship/test/engine/internal/kube"

// resource is one API resource the engine serves. Every group is served
// at v1.
type resource struct {
	name       string // plural, also the store's resource name (unique across groups)
	singular   string
	kind       string
	group      string // "" for core
	namespaced bool
	shortNames []string
	// subresources answered under <name>/<sub>.
	subresources []string
	// custom marks a CustomResourceDefinition's resource (the k3s CRDs):
	// it takes no strategic merge patch, as no custom resource does.
	custom bool
	// generation: metadata.generation counts changes to everything but
	// metadata and status, as the resource's registry strategy does.
	generation bool
}

var allVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// resources are what docs/reference/engines.md 9 says kubectl needs (nodes,
// pods and their eviction, daemonsets for drain), the objects those refer
// to, and the kinds a CNI manifest and kube-vip's manifests hold, which
// cargoship applies with kubectl apply or drops in server/manifests
// (docs/test-engine.md).
var resources = []resource{
	{name: "namespaces", singular: "namespace", kind: "Namespace", shortNames: []string{"ns"}},
	{name: "nodes", singular: "node", kind: "Node", shortNames: []string{"no"}, subresources: []string{"status"}},
	{name: "pods", singular: "pod", kind: "Pod", namespaced: true, shortNames: []string{"po"}, subresources: []string{"status", "eviction"}},
	{name: "secrets", singular: "secret", kind: "Secret", namespaced: true},
	{name: "configmaps", singular: "configmap", kind: "ConfigMap", namespaced: true, shortNames: []string{"cm"}},
	{name: "serviceaccounts", singular: "serviceaccount", kind: "ServiceAccount", namespaced: true, shortNames: []string{"sa"}},
	{name: "services", singular: "service", kind: "Service", namespaced: true, shortNames: []string{"svc"}, subresources: []string{"status"}},
	{name: "events", singular: "event", kind: "Event", namespaced: true, shortNames: []string{"ev"}},
	{name: "daemonsets", singular: "daemonset", kind: "DaemonSet", group: "apps", namespaced: true, shortNames: []string{"ds"}, subresources: []string{"status"}, generation: true},
	{name: "replicasets", singular: "replicaset", kind: "ReplicaSet", group: "apps", namespaced: true, shortNames: []string{"rs"}, subresources: []string{"status"}, generation: true},
	{name: "deployments", singular: "deployment", kind: "Deployment", group: "apps", namespaced: true, shortNames: []string{"deploy"}, subresources: []string{"status"}, generation: true},
	{name: "poddisruptionbudgets", singular: "poddisruptionbudget", kind: "PodDisruptionBudget", group: "policy", namespaced: true, shortNames: []string{"pdb"}, subresources: []string{"status"}, generation: true},
	{name: "clusterroles", singular: "clusterrole", kind: "ClusterRole", group: "rbac.authorization.k8s.io"},
	{name: "clusterrolebindings", singular: "clusterrolebinding", kind: "ClusterRoleBinding", group: "rbac.authorization.k8s.io"},
	{name: "roles", singular: "role", kind: "Role", group: "rbac.authorization.k8s.io", namespaced: true},
	{name: "rolebindings", singular: "rolebinding", kind: "RoleBinding", group: "rbac.authorization.k8s.io", namespaced: true},
	{name: "leases", singular: "lease", kind: "Lease", group: "coordination.k8s.io", namespaced: true},
	{name: "helmcharts", singular: "helmchart", kind: "HelmChart", group: "helm.cattle.io", namespaced: true, subresources: []string{"status"}, custom: true, generation: true},
	{name: "helmchartconfigs", singular: "helmchartconfig", kind: "HelmChartConfig", group: "helm.cattle.io", namespaced: true, custom: true, generation: true},
}

// groupVersions are the API groups served, each at v1, in the order of
// the table (core first, as /apis lists it without it).
var groupVersions = func() []string {
	var out []string
	seen := map[string]bool{"": true}
	for _, r := range resources {
		if !seen[r.group] {
			seen[r.group] = true
			out = append(out, r.group)
		}
	}
	return out
}()

func findResource(group, name string) (resource, bool) {
	for _, r := range resources {
		if r.group == group && r.name == name {
			return r, true
		}
	}
	return resource{}, false
}

func (r resource) apiVersion() string {
	if r.group == "" {
		return "v1"
	}
	return r.group + "/v1"
}

// schema is the kind's strategic-merge metadata; nil for a custom
// resource.
func (r resource) schema() *kube.Field {
	if r.custom {
		return nil
	}
	return kube.Schema(r.group, r.kind)
}

// patchTypes are the patch content types the resource takes: a custom
// resource takes no strategic merge patch. Server-side apply
// (application/apply-patch+yaml) is not modelled.
func (r resource) patchTypes() []string {
	if r.custom {
		return []string{"application/json-patch+json", "application/merge-patch+json"}
	}
	return []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
}

func (r resource) hasSub(sub string) bool {
	for _, s := range r.subresources {
		if s == sub {
			return true
		}
	}
	return false
}

// apiResource is meta/v1 APIResource.
type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
}

// resourceList is /api/v1 or /apis/<group>/v1. pods/eviction names group
// policy, version v1, kind Eviction: without that kubectl drain deletes
// pods instead of evicting them (docs/reference/engines.md 9).
func resourceList(group string) map[string]any {
	gv := "v1"
	if group != "" {
		gv = group + "/v1"
	}
	var list []apiResource
	for _, r := range resources {
		if r.group != group {
			continue
		}
		list = append(list, apiResource{Name: r.name, SingularName: r.singular, Namespaced: r.namespaced, Kind: r.kind, Verbs: allVerbs, ShortNames: r.shortNames})
		for _, sub := range r.subresources {
			switch sub {
			case "status":
				list = append(list, apiResource{Name: r.name + "/status", Namespaced: r.namespaced, Kind: r.kind, Verbs: []string{"get", "patch", "update"}})
			case "eviction":
				list = append(list, apiResource{Name: r.name + "/eviction", Namespaced: r.namespaced, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}})
			}
		}
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}
}

// groupList is /apis.
func groupList() map[string]any {
	var groups []map[string]any
	for _, g := range groupVersions {
		gv := map[string]any{"groupVersion": g + "/v1", "version": "v1"}
		groups = append(groups, map[string]any{"name": g, "versions": []any{gv}, "preferredVersion": gv})
	}
	return map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
}

// apiVersions is /api.
func apiVersions(serverAddress string) map[string]any {
	return map[string]any{
		"kind": "APIVersions", "versions": []string{"v1"},
		"serverAddressByClientCIDRs": []any{map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": serverAddress}},
	}
}
