package v1alpha1

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }

// rawUnmarshaler is a type that takes its YAML as raw text (PortValue,
// FileMode); any shape goes to it and it judges the value itself.
type rawUnmarshaler interface{ UnmarshalYAML([]byte) error }

var rawUnmarshalerType = reflect.TypeFor[rawUnmarshaler]()

// walkUnknown reports every key the Go type has no field for, all at once,
// where strict decoding would stop at the first. Keys starting with x- are
// extension keys and always allowed, as the earlier tool's schemas allowed.
// It also reports every value whose shape (mapping, list, scalar) is not the
// one its field takes, and returns how many it found: the decoder would stop
// at the first of those.
func walkUnknown(d *document, n ast.Node, t reflect.Type, path string) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(rawUnmarshalerType) {
		return 0
	}
	n = unwrap(n)
	if bad := shapeMismatch(d, n, t, path); bad {
		return 1
	}
	misshapen := 0
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFields(t)
		for _, mv := range mappingValues(n) {
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
			misshapen += walkUnknown(d, mv.Value, ft, child)
		}
	case reflect.Slice:
		if s, ok := n.(*ast.SequenceNode); ok {
			for i, v := range s.Values {
				misshapen += walkUnknown(d, v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case reflect.Map:
		for _, mv := range mappingValues(n) {
			if key := keyString(mv.Key); key != "<<" {
				misshapen += walkUnknown(d, mv.Value, t.Elem(), joinPath(path, key))
			}
		}
	}
	return misshapen
}

// mappingValues is a mapping's key/value pairs (none for other nodes).
func mappingValues(n ast.Node) []*ast.MappingValueNode {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	}
	return nil
}

// shapeMismatch reports a value that is a mapping, a list or a scalar where
// its field takes another of the three. Null and aliases pass: null is the
// zero value and an alias is judged where its anchor is.
func shapeMismatch(d *document, n ast.Node, t reflect.Type, path string) bool {
	got := nodeShape(n)
	if got == "" {
		return false
	}
	want := ""
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		want = "a mapping"
	case reflect.Slice, reflect.Array:
		want = "a list"
	default:
		want = "a scalar"
	}
	if got == want || want == "a scalar" && got != "a mapping" && got != "a list" {
		return false
	}
	line, col := 0, 0
	if tok := tokenOf(n); tok != nil && tok.Position != nil {
		line, col = tok.Position.Line, tok.Position.Column
	}
	what := got
	if got == "a scalar" {
		what = quoteShort(n.GetToken().Value)
	}
	d.findings = append(d.findings, Finding{Severity: SeverityError, File: d.file, Line: line, Column: col,
		Path: path, Message: fmt.Sprintf("want %s, got %s", goKind(t), what)})
	return true
}

// nodeShape is "a mapping", "a list" or "a scalar"; "" for null, aliases
// and anything else the decoder resolves by itself.
func nodeShape(n ast.Node) string {
	switch n.(type) {
	case nil, *ast.NullNode, *ast.AliasNode, *ast.CommentGroupNode:
		return ""
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return "a scalar"
	}
	return ""
}

// goKind names what a Go type takes, in the document's terms.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.Kind().String()
}

// nodeKind names a YAML node type the way goKind names Go types.
func nodeKind(t ast.NodeType) string {
	switch t {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.IntegerType, ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "true or false"
	case ast.NullType:
		return "null"
	}
	return t.YAMLName()
}

// quoteShort quotes a value for a message, cut to a readable length.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// plainKey is a key a field path can spell bare; any other key (a sysctl
// like net.ipv4.ip_forward, a label like example.com/zone) is quoted in
// brackets so the path stays unambiguous: sysctl["net.ipv4.ip_forward"].
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_\-]+$`)

func joinPath(parent, key string) string {
	if !plainKey.MatchString(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
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
			best = k
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
