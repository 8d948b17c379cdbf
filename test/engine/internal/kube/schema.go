package kube

// Field is the strategic-merge metadata of one field's value: the
// patchStrategy and patchMergeKey tags k8s.io/api puts on it, which kubectl
// reads from its built-in types when it computes a patch. A list is
// replaced whole unless it has a MergeKey (merged element by element) or
// is a Set (a list of scalars merged as a set); Fields describes the
// value's own fields (each element's, for a list). A nil *Field knows no
// field: everything under it merges as JSON merge patch does.
type Field struct {
	MergeKey string
	Set      bool
	Fields   map[string]*Field
}

func (f *Field) child(name string) *Field {
	if f == nil {
		return nil
	}
	return f.Fields[name]
}

func fields(kv ...any) *Field {
	f := &Field{Fields: map[string]*Field{}}
	for i := 0; i < len(kv); i += 2 {
		f.Fields[kv[i].(string)] = kv[i+1].(*Field)
	}
	return f
}

func keyed(key string, elem *Field) *Field {
	if elem == nil {
		elem = &Field{}
	}
	return &Field{MergeKey: key, Fields: elem.Fields}
}

// The tags of core/v1, apps/v1, policy/v1 and meta/v1 (every
// patchMergeKey of the kinds the engine serves; rbac/v1 and
// coordination/v1 have none, their lists are atomic).
var (
	objectMeta = fields("ownerReferences", keyed("uid", nil), "finalizers", &Field{Set: true})
	container  = fields("ports", keyed("containerPort", nil), "env", keyed("name", nil),
		"volumeMounts", keyed("mountPath", nil), "volumeDevices", keyed("devicePath", nil))
	podSpec = fields("volumes", keyed("name", nil), "initContainers", keyed("name", container),
		"containers", keyed("name", container), "ephemeralContainers", keyed("name", container),
		"imagePullSecrets", keyed("name", nil), "hostAliases", keyed("ip", nil),
		"topologySpreadConstraints", keyed("topologyKey", nil), "schedulingGates", keyed("name", nil),
		"resourceClaims", keyed("name", nil))
	conditions = fields("conditions", keyed("type", nil))
	workload   = fields("metadata", objectMeta, "spec", fields("template", fields("metadata", objectMeta, "spec", podSpec)), "status", conditions)

	schemas = map[string]*Field{
		"/Pod": fields("metadata", objectMeta, "spec", podSpec, "status", fields("conditions", keyed("type", nil),
			"hostIPs", keyed("ip", nil), "podIPs", keyed("ip", nil), "resourceClaimStatuses", keyed("name", nil))),
		"/Node": fields("metadata", objectMeta, "spec", fields("podCIDRs", &Field{Set: true}),
			"status", fields("conditions", keyed("type", nil), "addresses", keyed("type", nil))),
		"/Namespace":                 fields("metadata", objectMeta, "status", conditions),
		"/Service":                   fields("metadata", objectMeta, "spec", fields("ports", keyed("port", nil)), "status", conditions),
		"/ServiceAccount":            fields("metadata", objectMeta, "secrets", keyed("name", nil)),
		"apps/DaemonSet":             workload,
		"apps/Deployment":            workload,
		"apps/ReplicaSet":            workload,
		"apps/StatefulSet":           workload,
		"policy/PodDisruptionBudget": fields("metadata", objectMeta, "status", conditions),
	}

	// builtinGroups are the API groups compiled into kubectl (and the
	// apiserver): their kinds take strategic merge patches. Any other
	// group is a custom resource's, patched with JSON merge patch.
	builtinGroups = map[string]bool{"": true, "apps": true, "policy": true, "rbac.authorization.k8s.io": true,
		"coordination.k8s.io": true, "batch": true, "networking.k8s.io": true, "storage.k8s.io": true,
		"apiextensions.k8s.io": true, "admissionregistration.k8s.io": true, "scheduling.k8s.io": true,
		"discovery.k8s.io": true, "events.k8s.io": true, "autoscaling": true, "certificates.k8s.io": true,
		"node.k8s.io": true}
)

// Builtin reports whether group is one of Kubernetes' own API groups,
// whose kinds kubectl knows and patches with a strategic merge patch.
func Builtin(group string) bool { return builtinGroups[group] }

// Schema is the strategic-merge metadata of group's kind; every built-in
// kind has at least metadata's. It is nil for a custom resource.
func Schema(group, kind string) *Field {
	if !Builtin(group) {
		return nil
	}
	if s, ok := schemas[group+"/"+kind]; ok {
		return s
	}
	return fields("metadata", objectMeta)
}
