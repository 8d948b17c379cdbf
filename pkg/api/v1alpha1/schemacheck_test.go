package v1alpha1

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// validateSchema is a small JSON schema validator for the keywords the
// generator emits, enough to hold the schemas to the loader in tests
// without a dependency. A keyword it does not know is itself an error, so
// a new kind of schema cannot pass unchecked.
func validateSchema(root, s map[string]any, v any, at string) []string {
	var errs []string
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: %s", displayPath(at), fmt.Sprintf(format, args...)))
	}
	for k := range s {
		if !slices.Contains(knownKeywords, k) {
			fail("the validator does not know schema keyword %q", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := root["$defs"].(map[string]any)
		target, _ := defs[name].(map[string]any)
		if !found || target == nil {
			fail("unresolvable $ref %q", ref)
			return errs
		}
		errs = append(errs, validateSchema(root, target, v, at)...)
	}
	if typ, ok := s["type"].(string); ok && !hasType(v, typ) {
		fail("want %s, got %T %v", typ, v, v)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		fail("%v is not one of %v", v, enum)
	}
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, alt := range one {
			if len(validateSchema(root, alt.(map[string]any), v, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			fail("%v matches %d of oneOf's %d schemas, want exactly 1", v, n, len(one))
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isStr := v.(string); isStr && !regexp.MustCompile(p).MatchString(str) {
			fail("%q does not match %s", str, p)
		}
	}
	if lo, ok := s["minimum"]; ok && toFloat(v) < toFloat(lo) {
		fail("%v is below %v", v, lo)
	}
	if hi, ok := s["maximum"]; ok && toFloat(v) > toFloat(hi) {
		fail("%v is above %v", v, hi)
	}
	if arr, isArr := v.([]any); isArr {
		if mi, ok := s["minItems"]; ok && float64(len(arr)) < toFloat(mi) {
			fail("%d items, want at least %v", len(arr), mi)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range arr {
				errs = append(errs, validateSchema(root, items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	if obj, isObj := v.(map[string]any); isObj {
		errs = append(errs, validateObject(root, s, obj, at)...)
	}
	return errs
}

func validateObject(root, s map[string]any, obj map[string]any, at string) []string {
	var errs []string
	req, _ := s["required"].([]any)
	for _, r := range req {
		if _, ok := obj[r.(string)]; !ok {
			errs = append(errs, fmt.Sprintf("%s: %q is required", displayPath(at), r))
		}
	}
	props, _ := s["properties"].(map[string]any)
	patterns, _ := s["patternProperties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		child := joinPath(at, k)
		matched := false
		if p, ok := props[k].(map[string]any); ok {
			matched = true
			errs = append(errs, validateSchema(root, p, obj[k], child)...)
		}
		for pat, ps := range patterns {
			if regexp.MustCompile(pat).MatchString(k) {
				matched = true
				if m, isMap := ps.(map[string]any); isMap {
					errs = append(errs, validateSchema(root, m, obj[k], child)...)
				}
			}
		}
		if matched {
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				errs = append(errs, fmt.Sprintf("%s: unknown key", displayPath(child)))
			}
		case map[string]any:
			errs = append(errs, validateSchema(root, ap, obj[k], child)...)
		}
	}
	return errs
}

var knownKeywords = []string{
	"$schema", "$id", "$ref", "$defs", "title", "description", "default", "type", "enum", "oneOf",
	"pattern", "minimum", "maximum", "minItems", "items", "properties", "patternProperties",
	"additionalProperties", "required",
}

func displayPath(p string) string {
	if p == "" {
		return "(document)"
	}
	return p
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		f := toFloat(v)
		return !math.IsNaN(f) && f == math.Trunc(f)
	case "number":
		return !math.IsNaN(toFloat(v))
	}
	return false
}

// toFloat reads the numbers a YAML or JSON decoder produces; NaN for
// anything else.
func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint64:
		return float64(n)
	case float64:
		return n
	case json.Number:
		f, err := n.Float64()
		if err == nil {
			return f
		}
	}
	return math.NaN()
}

// TestValidateSchema proves the test validator rejects what it must, so
// TestSchemaAgreesWithLoader passing means something.
func TestValidateSchema(t *testing.T) {
	root := map[string]any{
		"$defs": map[string]any{"Port": map[string]any{"oneOf": []any{
			map[string]any{"type": "integer", "minimum": 1.0, "maximum": 65535.0},
			map[string]any{"type": "string", "pattern": "^[0-9]+$"},
		}}},
		"type":                 "object",
		"required":             []any{"kind"},
		"additionalProperties": false,
		"patternProperties":    map[string]any{"^x-": true},
		"properties": map[string]any{
			"kind":  map[string]any{"type": "string", "enum": []any{"Cluster"}},
			"ports": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"$ref": "#/$defs/Port"}},
		},
	}
	cases := []struct {
		doc  map[string]any
		errs int
	}{
		{map[string]any{"kind": "Cluster", "x-note": 1, "ports": []any{uint64(22), "443"}}, 0},
		{map[string]any{"ports": []any{uint64(22)}}, 1},
		{map[string]any{"kind": "Distro"}, 1},
		{map[string]any{"kind": "Cluster", "extra": true}, 1},
		{map[string]any{"kind": "Cluster", "ports": []any{}}, 1},
		{map[string]any{"kind": "Cluster", "ports": []any{uint64(70000), "http"}}, 2},
		{map[string]any{"kind": "Cluster", "ports": "22"}, 1},
	}
	for i, c := range cases {
		if errs := validateSchema(root, root, c.doc, ""); len(errs) != c.errs {
			t.Errorf("case %d: %d errors, want %d: %v", i, len(errs), c.errs, errs)
		}
	}
	if errs := validateSchema(root, map[string]any{"unevaluatedProperties": false}, nil, ""); len(errs) != 1 {
		t.Errorf("an unknown keyword passed: %v", errs)
	}
}
