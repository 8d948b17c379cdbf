package v1alpha1

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }

// walkUnknown reports every key the Go type has no field for, all at once,
// where strict decoding would stop at the first. Keys starting with x- are
// extension keys and always allowed, as the earlier tool's schemas allowed.
func walkUnknown(d *document, n ast.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	n = unwrap(n)
	switch t.Kind() {
	case reflect.Struct:
		m, ok := n.(*ast.MappingNode)
		if !ok {
			if mv, isMV := n.(*ast.MappingValueNode); isMV {
				m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
			} else {
				return // the decoder reports the type mismatch
			}
		}
		fields := jsonFields(t)
		for _, mv := range m.Values {
			key := keyString(mv.Key)
			if key == "<<" || strings.HasPrefix(key, "x-") {
				continue
			}
			ft, ok := fields[key]
			child := joinPath(path, key)
			if !ok {
				line, col := 0, 0
				if tok := mv.Key.GetToken(); tok != nil {
					line, col = tok.Position.Line, tok.Position.Column
				}
				d.findings = append(d.findings, Finding{Severity: SeverityError, File: d.file, Line: line, Column: col,
					Path: child, Message: unknownMessage(key, fields)})
				continue
			}
			walkUnknown(d, mv.Value, ft, child)
		}
	case reflect.Slice:
		s, ok := n.(*ast.SequenceNode)
		if !ok {
			return
		}
		for i, v := range s.Values {
			walkUnknown(d, v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		m, ok := n.(*ast.MappingNode)
		if !ok || t.Elem().Kind() == reflect.Interface {
			return
		}
		for _, mv := range m.Values {
			walkUnknown(d, mv.Value, t.Elem(), joinPath(path, keyString(mv.Key)))
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// jsonFields maps a struct's YAML keys (its json tags) to field types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// unknownMessage names the unknown key and, when one is close, the key the
// author probably meant.
func unknownMessage(key string, fields map[string]reflect.Type) string {
	best, bestDist := "", 3
	for k := range fields {
		if strings.EqualFold(k, key) {
			best, bestDist = k, 0
			break
		}
		if dist := editDistance(strings.ToLower(k), strings.ToLower(key)); dist < bestDist || dist == bestDist && k < best {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown field %q (did you mean %q?)", key, best)
	}
	return fmt.Sprintf("unknown field %q", key)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
