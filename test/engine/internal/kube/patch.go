package kube

import "strings"

// MergePatch applies an RFC 7386 JSON merge patch (what kubectl label
// sends): maps merge, null deletes, anything else replaces.
func MergePatch(target, patch Object) Object {
	out := DeepCopy(target)
	if out == nil {
		out = Object{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(out, k)
			continue
		}
		pm, isMap := pv.(map[string]any)
		tm, wasMap := out[k].(map[string]any)
		if isMap && wasMap {
			out[k] = MergePatch(tm, pm)
		} else if isMap {
			out[k] = MergePatch(nil, pm)
		} else {
			out[k] = copyValue(pv)
		}
	}
	return out
}

// mergeKeys are the lists a strategic merge patch merges element by
// element rather than replacing, with their patchMergeKey (core/v1).
var mergeKeys = map[string]string{
	"status.conditions":        "type",
	"status.addresses":         "type",
	"metadata.ownerReferences": "uid",
	"spec.containers":          "name",
	"spec.volumes":             "name",
}

// StrategicMergePatch applies a strategic merge patch (what kubectl cordon
// and the kubelet's status updates send). It is a merge patch that also
// merges the lists above by key, honours {"$patch":"delete"} in them, and
// drops the $setElementOrder/$retainKeys directives, whose ordering the
// engine does not keep.
func StrategicMergePatch(target, patch Object) Object {
	return strategic(target, patch, "")
}

func strategic(target, patch Object, at string) Object {
	out := DeepCopy(target)
	if out == nil {
		out = Object{}
	}
	for k, pv := range patch {
		if strings.HasPrefix(k, "$") {
			continue
		}
		path := k
		if at != "" {
			path = at + "." + k
		}
		switch {
		case pv == nil:
			delete(out, k)
		case mergeKeys[path] != "":
			pl, _ := pv.([]any)
			tl, _ := out[k].([]any)
			out[k] = mergeList(tl, pl, mergeKeys[path])
		default:
			pm, isMap := pv.(map[string]any)
			if !isMap {
				out[k] = copyValue(pv)
				continue
			}
			tm, _ := out[k].(map[string]any)
			out[k] = strategic(tm, pm, path)
		}
	}
	return out
}

// mergeList merges patch elements into target by key: a matching element
// is merge-patched, a new one appended, one marked $patch: delete removed.
func mergeList(target, patch []any, key string) []any {
	out := make([]any, 0, len(target)+len(patch))
	for _, t := range target {
		out = append(out, copyValue(t))
	}
	for _, p := range patch {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		idx := -1
		for i, t := range out {
			if tm, ok := t.(map[string]any); ok && tm[key] == pm[key] {
				idx = i
				break
			}
		}
		if pm["$patch"] == "delete" {
			if idx >= 0 {
				out = append(out[:idx], out[idx+1:]...)
			}
			continue
		}
		if idx >= 0 {
			out[idx] = MergePatch(out[idx].(map[string]any), pm)
		} else {
			out = append(out, MergePatch(nil, pm))
		}
	}
	return out
}
