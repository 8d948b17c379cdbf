// Package kube is the small part of the Kubernetes API the test engine
// serves, hand-written: objects are kept as decoded JSON (so fields the
// engine does not know survive a kubectl PUT), with typed structs for the
// objects the engine builds itself.
package kube

import (
	"encoding/json"
	"strings"
)

// Object is one API object as decoded JSON.
type Object = map[string]any

// ToObject converts a typed object to an Object.
func ToObject(v any) Object {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the engine's own types reach here
	}
	var o Object
	if err := json.Unmarshal(b, &o); err != nil {
		panic(err)
	}
	return o
}

// FromObject decodes an Object into a typed value.
func FromObject(o Object, v any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// DeepCopy copies an Object.
func DeepCopy(o Object) Object {
	if o == nil {
		return nil
	}
	out := make(Object, len(o))
	for k, v := range o {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return DeepCopy(t)
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = copyValue(e)
		}
		return c
	}
	return v
}

// Get is the value at a dotted path ("metadata.name"), or nil.
func Get(o Object, path string) any {
	var cur any = o
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// Str is the string at a dotted path, or "".
func Str(o Object, path string) string {
	s, _ := Get(o, path).(string)
	return s
}

// StrMap is the string map at a dotted path (labels, annotations).
func StrMap(o Object, path string) map[string]string {
	out := map[string]string{}
	m, _ := Get(o, path).(map[string]any)
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Set puts value at a dotted path, creating maps on the way.
func Set(o Object, path string, value any) {
	parts := strings.Split(path, ".")
	cur := o
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = value
}

// Delete removes the value at a dotted path.
func Delete(o Object, path string) {
	parts := strings.Split(path, ".")
	cur := o
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	delete(cur, parts[len(parts)-1])
}

// CopyValue copies one decoded JSON value.
func CopyValue(v any) any { return copyValue(v) }
