package apiserver

// resource is one API resource the engine serves.
type resource struct {
	name       string // plural, also the store's resource name
	singular   string
	kind       string
	group      string // "" for core
	namespaced bool
	shortNames []string
	// subresources answered under <name>/<sub>.
	subresources []string
}

var allVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// resources are what docs/reference/engines.md 9 says kubectl needs (nodes,
// pods and their eviction, daemonsets for drain) plus the objects those refer
// to.
var resources = []resource{
	{name: "namespaces", singular: "namespace", kind: "Namespace", shortNames: []string{"ns"}},
	{name: "nodes", singular: "node", kind: "Node", shortNames: []string{"no"}, subresources: []string{"status"}},
	{name: "pods", singular: "pod", kind: "Pod", namespaced: true, shortNames: []string{"po"}, subresources: []string{"status", "eviction"}},
	{name: "secrets", singular: "secret", kind: "Secret", namespaced: true},
	{name: "events", singular: "event", kind: "Event", namespaced: true, shortNames: []string{"ev"}},
	{name: "daemonsets", singular: "daemonset", kind: "DaemonSet", group: "apps", namespaced: true, shortNames: []string{"ds"}},
	{name: "replicasets", singular: "replicaset", kind: "ReplicaSet", group: "apps", namespaced: true, shortNames: []string{"rs"}},
	{name: "deployments", singular: "deployment", kind: "Deployment", group: "apps", namespaced: true, shortNames: []string{"deploy"}},
	{name: "poddisruptionbudgets", singular: "poddisruptionbudget", kind: "PodDisruptionBudget", group: "policy", namespaced: true, shortNames: []string{"pdb"}},
}

// groupVersions are the API groups served, each at v1.
var groupVersions = []string{"apps", "policy"}

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
