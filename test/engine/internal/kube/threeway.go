package kube

import "reflect"

// ThreeWayMerge is what applying modified over current gives, with
// original the configuration applied last (nil at first): a field set in
// modified takes its value, one that original had and modified dropped is
// removed, and one only current has (set by the server or another
// writer) is kept. schema is the kind's merge metadata (Schema): lists it
// names merge element by element, the others are replaced; a nil schema
// is a JSON merge three-way, as for custom resources. It is the result of
// the patch kubectl apply or the k3s deploy controller would compute and
// send.
func ThreeWayMerge(schema *Field, original, modified, current Object) Object {
	return merge3(schema, original, modified, current)
}

func merge3(f *Field, orig, mod, cur map[string]any) map[string]any {
	out := DeepCopy(cur)
	if out == nil {
		out = map[string]any{}
	}
	for k := range orig {
		if _, ok := mod[k]; !ok {
			delete(out, k)
		}
	}
	for k, mv := range mod {
		child := f.child(k)
		switch v := mv.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			om, _ := orig[k].(map[string]any)
			cm, _ := cur[k].(map[string]any)
			out[k] = merge3(child, om, v, cm)
		case []any:
			ol, _ := orig[k].([]any)
			cl, _ := cur[k].([]any)
			out[k] = merge3List(child, ol, v, cl)
		default:
			out[k] = v
		}
	}
	return out
}

// merge3List merges a list by its merge key or as a set: modified's
// elements in its order (each merged with current's element of the same
// key), then current's elements that neither original nor modified has.
// A list without merge metadata is modified's.
func merge3List(f *Field, orig, mod, cur []any) []any {
	out := make([]any, 0, len(mod)+len(cur))
	switch {
	case f != nil && f.MergeKey != "":
		key := f.MergeKey
		for _, m := range mod {
			mm, ok := m.(map[string]any)
			if !ok {
				out = append(out, copyValue(m))
				continue
			}
			var om, cm map[string]any
			if i := indexByKey(orig, key, mm[key]); i >= 0 {
				om, _ = orig[i].(map[string]any)
			}
			if i := indexByKey(cur, key, mm[key]); i >= 0 {
				cm, _ = cur[i].(map[string]any)
			}
			out = append(out, merge3(f, om, mm, cm))
		}
		for _, c := range cur {
			cm, ok := c.(map[string]any)
			if ok && indexByKey(mod, key, cm[key]) < 0 && indexByKey(orig, key, cm[key]) < 0 {
				out = append(out, copyValue(c))
			}
		}
	case f != nil && f.Set:
		for _, m := range mod {
			out = append(out, copyValue(m))
		}
		for _, c := range cur {
			if !contains(mod, c) && !contains(orig, c) {
				out = append(out, copyValue(c))
			}
		}
	default:
		for _, m := range mod {
			out = append(out, copyValue(m))
		}
	}
	return out
}

// Equal reports whether two objects are the same JSON.
func Equal(a, b Object) bool { return reflect.DeepEqual(a, b) }
