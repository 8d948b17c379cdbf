package kube

import (
	"fmt"
	"reflect"
	"strings"
)

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

// StrategicMergePatch applies a strategic merge patch (what kubectl apply,
// cordon and the kubelet's status updates send to built-in kinds) to
// target, with schema the kind's merge metadata (Schema): a merge patch
// that merges the lists schema names element by element on their merge
// key and the set lists as sets, and honours the directives kubectl
// writes — $patch (replace, delete, merge) in a map or a list element,
// $retainKeys, $deleteFromPrimitiveList/<list> and $setElementOrder/<list>
// (the listed elements come first, in that order; the apiserver keeps
// the place of elements it alone has, the engine puts them after).
func StrategicMergePatch(schema *Field, target, patch Object) (Object, error) {
	out, _, err := strategicMap(schema, target, patch)
	if out == nil {
		out = Object{}
	}
	return out, err
}

// strategicMap merges patch into target; deleted reports a $patch: delete.
func strategicMap(f *Field, target, patch map[string]any) (out map[string]any, deleted bool, err error) {
	switch p := patch["$patch"]; p {
	case nil, "merge":
	case "delete":
		return nil, true, nil
	case "replace":
		out = map[string]any{}
		for k, v := range patch {
			if k != "$patch" {
				out[k] = copyValue(v)
			}
		}
		return out, false, nil
	default:
		return nil, false, fmt.Errorf("unknown patch type: %v", p)
	}
	out = DeepCopy(target)
	if out == nil {
		out = map[string]any{}
	}
	for k, pv := range patch {
		if strings.HasPrefix(k, "$") {
			continue
		}
		child := f.child(k)
		switch v := pv.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			tm, _ := out[k].(map[string]any)
			m, del, err := strategicMap(child, tm, v)
			if err != nil {
				return nil, false, err
			}
			if del {
				delete(out, k)
			} else {
				out[k] = m
			}
		case []any:
			tl, _ := out[k].([]any)
			l, err := strategicList(child, tl, v)
			if err != nil {
				return nil, false, err
			}
			out[k] = l
		default:
			out[k] = v
		}
	}
	for k, pv := range patch {
		if list, ok := strings.CutPrefix(k, "$deleteFromPrimitiveList/"); ok {
			drop, _ := pv.([]any)
			cur, _ := out[list].([]any)
			out[list] = without(cur, drop)
		}
	}
	for k, pv := range patch {
		if list, ok := strings.CutPrefix(k, "$setElementOrder/"); ok {
			if cur, ok := out[list].([]any); ok {
				order, _ := pv.([]any)
				out[list] = reorder(cur, order, f.child(list))
			}
		}
	}
	if keep, ok := patch["$retainKeys"].([]any); ok {
		retained := map[string]bool{}
		for _, k := range keep {
			if s, ok := k.(string); ok {
				retained[s] = true
			}
		}
		for k := range out {
			if !retained[k] {
				delete(out, k)
			}
		}
	}
	return out, false, nil
}

// strategicList merges a patch list into target: by merge key, as a set,
// or (no metadata) by replacing it.
func strategicList(f *Field, target, patch []any) ([]any, error) {
	switch {
	case f != nil && f.MergeKey != "":
		return mergeByKey(f, target, patch)
	case f != nil && f.Set:
		out := copyValue(target).([]any)
		if out == nil {
			out = []any{}
		}
		for _, p := range patch {
			if !contains(out, p) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	out := make([]any, 0, len(patch))
	for _, p := range patch {
		out = append(out, copyValue(p))
	}
	return out, nil
}

// mergeByKey merges patch elements into target by f.MergeKey: a matching
// element is merged, a new one appended, one marked $patch: delete
// removed; an element {"$patch": "replace"} makes the other patch
// elements the whole list.
func mergeByKey(f *Field, target, patch []any) ([]any, error) {
	key := f.MergeKey
	for _, p := range patch {
		if pm, ok := p.(map[string]any); ok && pm["$patch"] == "replace" {
			out := []any{}
			for _, q := range patch {
				if qm, ok := q.(map[string]any); !ok || qm["$patch"] != "replace" {
					out = append(out, copyValue(q))
				}
			}
			return out, nil
		}
	}
	out := make([]any, 0, len(target)+len(patch))
	for _, t := range target {
		out = append(out, copyValue(t))
	}
	for _, p := range patch {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a list merged by %q holds a %T, not an object", key, p)
		}
		idx := indexByKey(out, key, pm[key])
		if pm["$patch"] == "delete" {
			if idx >= 0 {
				out = append(out[:idx], out[idx+1:]...)
			}
			continue
		}
		var cur map[string]any
		if idx >= 0 {
			cur, _ = out[idx].(map[string]any)
		}
		m, _, err := strategicMap(f, cur, pm)
		if err != nil {
			return nil, err
		}
		if idx >= 0 {
			out[idx] = m
		} else {
			out = append(out, m)
		}
	}
	return out, nil
}

func indexByKey(list []any, key string, value any) int {
	for i, e := range list {
		if m, ok := e.(map[string]any); ok && reflect.DeepEqual(m[key], value) {
			return i
		}
	}
	return -1
}

func contains(list []any, v any) bool {
	for _, e := range list {
		if reflect.DeepEqual(e, v) {
			return true
		}
	}
	return false
}

func without(list, drop []any) []any {
	out := []any{}
	for _, e := range list {
		if !contains(drop, e) {
			out = append(out, e)
		}
	}
	return out
}

// reorder puts the elements order names first, in its order, and the
// others after them in their own order.
func reorder(list, order []any, f *Field) []any {
	same := func(e, o any) bool {
		em, eok := e.(map[string]any)
		om, ook := o.(map[string]any)
		if eok && ook && f != nil && f.MergeKey != "" {
			return reflect.DeepEqual(em[f.MergeKey], om[f.MergeKey])
		}
		return reflect.DeepEqual(e, o)
	}
	out := make([]any, 0, len(list))
	used := make([]bool, len(list))
	for _, o := range order {
		for i, e := range list {
			if !used[i] && same(e, o) {
				out = append(out, e)
				used[i] = true
				break
			}
		}
	}
	for i, e := range list {
		if !used[i] {
			out = append(out, e)
		}
	}
	return out
}
