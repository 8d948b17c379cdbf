package kube

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// JSONPatchOp is one RFC 6902 operation (kubectl patch --type=json).
type JSONPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// JSONPatch applies add, replace, remove and test operations; move and
// copy are not needed by anything cargoship runs and are refused.
func JSONPatch(target Object, ops []JSONPatchOp) (Object, error) {
	doc := any(DeepCopy(target))
	for _, op := range ops {
		parts, err := pointer(op.Path)
		if err != nil {
			return nil, err
		}
		if op.Op == "test" {
			got, err := lookup(doc, parts)
			if err != nil || !reflect.DeepEqual(got, op.Value) {
				return nil, fmt.Errorf("test operation for path %q failed", op.Path)
			}
			continue
		}
		if op.Op != "add" && op.Op != "replace" && op.Op != "remove" {
			return nil, fmt.Errorf("unsupported json patch operation %q", op.Op)
		}
		if doc, err = apply(doc, parts, op); err != nil {
			return nil, err
		}
	}
	out, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("json patch replaced the whole object")
	}
	return out, nil
}

func pointer(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("invalid json pointer %q", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func lookup(doc any, parts []string) (any, error) {
	for _, p := range parts {
		switch t := doc.(type) {
		case map[string]any:
			v, ok := t[p]
			if !ok {
				return nil, fmt.Errorf("path %q not found", p)
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil, fmt.Errorf("index %q out of range", p)
			}
			doc = t[i]
		default:
			return nil, fmt.Errorf("path %q not found", p)
		}
	}
	return doc, nil
}

// apply performs op at parts below doc and returns the new doc.
func apply(doc any, parts []string, op JSONPatchOp) (any, error) {
	if len(parts) == 0 {
		return copyValue(op.Value), nil
	}
	key, rest := parts[0], parts[1:]
	switch t := doc.(type) {
	case map[string]any:
		if len(rest) > 0 {
			child, ok := t[key]
			if !ok {
				return nil, fmt.Errorf("path %q not found", key)
			}
			v, err := apply(child, rest, op)
			t[key] = v
			return t, err
		}
		if _, exists := t[key]; !exists && op.Op != "add" {
			return nil, fmt.Errorf("path %q not found", key)
		}
		if op.Op == "remove" {
			delete(t, key)
		} else {
			t[key] = copyValue(op.Value)
		}
		return t, nil
	case []any:
		i := len(t)
		if key != "-" {
			n, err := strconv.Atoi(key)
			if err != nil || n < 0 || n > len(t) {
				return nil, fmt.Errorf("index %q out of range", key)
			}
			i = n
		}
		if len(rest) > 0 {
			if i >= len(t) {
				return nil, fmt.Errorf("index %q out of range", key)
			}
			v, err := apply(t[i], rest, op)
			t[i] = v
			return t, err
		}
		switch op.Op {
		case "add":
			t = append(t[:i], append([]any{copyValue(op.Value)}, t[i:]...)...)
		case "replace", "remove":
			if i >= len(t) {
				return nil, fmt.Errorf("index %q out of range", key)
			}
			if op.Op == "replace" {
				t[i] = copyValue(op.Value)
			} else {
				t = append(t[:i], t[i+1:]...)
			}
		}
		return t, nil
	}
	return nil, fmt.Errorf("path %q not found", key)
}
