// Package schemacheck validates a JSON document against a JSON schema
// (draft 2020-12) for the keywords cargoship's generated schemas use. It is
// small on purpose: the tests that check `-o json` against
// schema/report.schema.json need no dependency, and a keyword it does not
// know is an error rather than a pass, so a schema that grows a new kind of
// rule cannot be waved through unchecked.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Validate checks doc against schema and returns one line per violation,
// each starting with the path of the offending value ("hosts[0].changes");
// an empty list means the document conforms. The error is for input that
// is not JSON.
func Validate(schema, doc []byte) ([]string, error) {
	var s map[string]any
	if err := decode(schema, &s); err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	var v any
	if err := decode(doc, &v); err != nil {
		return nil, fmt.Errorf("the document: %w", err)
	}
	c := checker{root: s}
	c.value(s, v, "")
	return c.errs, nil
}

// decode reads exactly one JSON value, numbers kept exact.
func decode(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// known are the keywords the checker understands; annotations among them
// (title, description, ...) assert nothing.
var known = []string{
	"$schema", "$id", "$defs", "$ref", "title", "description", "default", "examples",
	"type", "enum", "const", "required", "properties", "additionalProperties",
	"items", "minItems", "minimum", "maximum", "minLength", "pattern",
}

type checker struct {
	root map[string]any
	errs []string
}

func (c *checker) fail(at, format string, args ...any) {
	if at == "" {
		at = "(document)"
	}
	c.errs = append(c.errs, at+": "+fmt.Sprintf(format, args...))
}

// value checks v against s; at is v's path.
func (c *checker) value(s map[string]any, v any, at string) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			c.fail(at, "the checker does not know schema keyword %q", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, local := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := c.root["$defs"].(map[string]any)
		target, found := defs[name].(map[string]any)
		if !local || !found {
			c.fail(at, "unresolvable $ref %q", ref)
			return
		}
		c.value(target, v, at)
	}
	if t, ok := s["type"]; ok && !c.typeMatches(t, v) {
		c.fail(at, "want %v, got %s", t, describe(v))
		return // the other keywords would only repeat the mismatch
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		c.fail(at, "%s is not one of %v", describe(v), e)
	}
	if k, ok := s["const"]; ok && !equal(k, v) {
		c.fail(at, "%s is not %v", describe(v), k)
	}
	switch x := v.(type) {
	case json.Number:
		c.number(s, x, at)
	case string:
		c.str(s, x, at)
	case []any:
		c.array(s, x, at)
	case map[string]any:
		c.object(s, x, at)
	}
}

func (c *checker) number(s map[string]any, n json.Number, at string) {
	if lo, ok := s["minimum"].(json.Number); ok && compare(n, lo) < 0 {
		c.fail(at, "%s is below the minimum %s", n, lo)
	}
	if hi, ok := s["maximum"].(json.Number); ok && compare(n, hi) > 0 {
		c.fail(at, "%s is above the maximum %s", n, hi)
	}
}

func (c *checker) str(s map[string]any, str, at string) {
	if n, ok := s["minLength"].(json.Number); ok && compare(json.Number(fmt.Sprint(len([]rune(str)))), n) < 0 {
		c.fail(at, "%q is shorter than %s", str, n)
	}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		switch {
		case err != nil:
			c.fail(at, "the schema's pattern %q: %v", p, err)
		case !re.MatchString(str):
			c.fail(at, "%q does not match %s", str, p)
		}
	}
}

func (c *checker) array(s map[string]any, arr []any, at string) {
	if n, ok := s["minItems"].(json.Number); ok && compare(json.Number(fmt.Sprint(len(arr))), n) < 0 {
		c.fail(at, "%d items, want at least %s", len(arr), n)
	}
	if items, ok := s["items"].(map[string]any); ok {
		for i, e := range arr {
			c.value(items, e, fmt.Sprintf("%s[%d]", at, i))
		}
	}
}

func (c *checker) object(s map[string]any, obj map[string]any, at string) {
	req, _ := s["required"].([]any)
	for _, r := range req {
		if name, _ := r.(string); name != "" {
			if _, ok := obj[name]; !ok {
				c.fail(at, "%q is required", name)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		child := k
		if at != "" {
			child = at + "." + k
		}
		if p, ok := props[k].(map[string]any); ok {
			c.value(p, obj[k], child)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				c.fail(child, "unknown key")
			}
		case map[string]any:
			c.value(ap, obj[k], child)
		}
	}
}

// typeMatches reads type as one name or a list of names.
func (c *checker) typeMatches(t, v any) bool {
	switch t := t.(type) {
	case string:
		return hasType(t, v)
	case []any:
		return slices.ContainsFunc(t, func(x any) bool { name, _ := x.(string); return hasType(name, v) })
	}
	c.fail("", "the schema's type %v is neither a name nor a list", t)
	return false
}

func hasType(name string, v any) bool {
	switch x := v.(type) {
	case nil:
		return name == "null"
	case bool:
		return name == "boolean"
	case string:
		return name == "string"
	case []any:
		return name == "array"
	case map[string]any:
		return name == "object"
	case json.Number:
		if name == "number" {
			return true
		}
		r, ok := new(big.Rat).SetString(x.String())
		return name == "integer" && ok && r.IsInt()
	}
	return false
}

// compare orders two JSON numbers exactly.
func compare(a, b json.Number) int {
	x, okA := new(big.Rat).SetString(a.String())
	y, okB := new(big.Rat).SetString(b.String())
	if !okA || !okB {
		return strings.Compare(a.String(), b.String())
	}
	return x.Cmp(y)
}

// equal is JSON equality: numbers by value, the rest structurally.
func equal(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		return ok && compare(x, y) == 0
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}
