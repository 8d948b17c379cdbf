package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// TestMappingKeysCountedAsTheParserGroupsThem runs the key count with a
// limit of three: each document holds one mapping of four keys (refused,
// at its first key) or only mappings of three (accepted).
func TestMappingKeysCountedAsTheParserGroupsThem(t *testing.T) {
	cases := []struct {
		name, doc string
		at        string // "" when accepted
	}{
		{"block", "a: 1\nb: 2\nc: 3\nd: 4\n", "x.yaml:1:1:"},
		{"nested, then back out", "m:\n  a: 1\n  b: 2\n  c: 3\nn: 1\no: 1\n", ""},
		{"nested keys do not count for the parent", "m:\n  a: 1\n  b: {x: 1, y: 2}\n  c: 3\nn: 1\no: [1, 2, 3, 4]\n", ""},
		{"the parent keeps counting after a child", "m:\n  a: 1\nn:\n  b: 1\no: 1\np: 1\n", "x.yaml:1:1:"},
		{"one mapping per list item", "l:\n  - a: 1\n    b: 2\n    c: 3\n  - a: 1\n    b: 2\n    c: 3\n", ""},
		{"a list item's mapping", "l:\n  - a: 1\n    b: 2\n    c: 3\n    d: 4\n", "x.yaml:2:5:"},
		{"a list at the parent's column", "a:\n- 1\n- 2\nb: 1\nc: 1\nd: 1\n", "x.yaml:1:1:"},
		{"anchored and tagged keys line up with plain ones", "&x a: 1\n!!str b: 2\nc: 3\n&y !!str d: 4\n", "x.yaml:1:1:"},
		{"explicit keys", "? a\n: 1\n? b\n: 2\n? c\n: 3\n? d\n: 4\n", "x.yaml:1:1:"},
		{"a block scalar does not end the mapping", "a: |\n  text\nb: >\n  more\nc: 1\nd: 1\n", "x.yaml:1:1:"},
		{"a comment does not end the mapping", "m:\n  a: 1\n# note\n  b: 2\n  c: 3\n  d: 4\n", "x.yaml:2:3:"},
		{"flow", "m: {a: 1, b: 2, c: 3, d: 4}\n", "x.yaml:1:4:"},
		{"flow, nested", "m: {a: {x: 1, y: 2, z: 3}, b: [{p: 1}, {q: 1}], c: 3}\n", ""},
		{"pairs in a flow list are mappings of one", "m: [a: 1, b: 2, c: 3, d: 4]\n", ""},
		{"a new document starts again", "a: 1\nb: 2\nc: 3\n---\nd: 4\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, f := scanShape("x.yaml", []byte(c.doc), shapeLimits{tokens: maxTokens, keys: 3, aliases: maxAliases})
			switch {
			case c.at == "" && f != nil:
				t.Fatalf("refused: %s", f)
			case c.at != "" && f == nil:
				t.Fatalf("accepted; want %s ... more than 3 keys", c.at)
			case c.at != "" && (!strings.HasPrefix(f.String(), c.at) || !strings.Contains(f.Message, "holds more than 3 keys")):
				t.Fatalf("got %s, want %s ... holds more than 3 keys", f, c.at)
			}
		})
	}
}

func TestAliasCountBounded(t *testing.T) {
	doc := "a: &a 1\nl: [*a, *a, *a]\n"
	if _, f := scanShape("x.yaml", []byte(doc), shapeLimits{tokens: maxTokens, keys: maxMappingKeys, aliases: 3}); f != nil {
		t.Fatalf("three aliases refused: %s", f)
	}
	_, f := scanShape("x.yaml", []byte(doc+"m: *a\n"), shapeLimits{tokens: maxTokens, keys: maxMappingKeys, aliases: 3})
	if f == nil || f.String() != "x.yaml:3:4: holds more than 3 aliases (*name)" {
		t.Fatalf("got %v, want the fourth alias refused at 3:4", f)
	}
}

// TestTokenBoundCoversTheLexer checks the raw count against the lexer on
// every document in testdata and on dense shapes: the count must reach
// half the lexer's tokens, or the limit would not bound them.
func TestTokenBoundCoversTheLexer(t *testing.T) {
	docs := map[string]string{
		"flow":          "a: [" + strings.Repeat("[1,{b: c},&x d,*x,!t e,'f',\"g\"],", 50) + "]\n",
		"empty scalars": "a:\n" + strings.Repeat("  - |\n  - >-\n  -\n", 50),
		"anchors":       strings.Repeat("&a k: &b v\n", 50),
		"documents":     strings.Repeat("--- a\n...\n", 50),
		"comments":      strings.Repeat("a: 1 #c\n#d\n", 50),
		"merge keys":    "d: &d {x: 1}\n" + strings.Repeat("- <<: *d\n  ? y\n  : 2\n", 50),
	}
	files, err := filepath.Glob("testdata/*/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata documents: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(data)
	}
	for name, doc := range docs {
		n := len(lexer.Tokenize(doc))
		if checkTokenBound("x.yaml", []byte(doc), (n-1)/2) == nil {
			t.Errorf("%s: %d lexer tokens, yet the count stays at %d or under", name, n, (n-1)/2)
		}
	}
}

func TestTokenBoundLocated(t *testing.T) {
	f := checkTokenBound("x.yaml", []byte("a: 1\nb: [c, d]\n"), 6)
	if f == nil || f.String() != "x.yaml:2:5: holds more than 6 YAML tokens (words and symbols such as - : [ ], in values and comments alike)" {
		t.Fatalf("got %v, want the seventh token (c) at 2:5", f)
	}
}

// TestLimitsAreFarAboveRealDocuments loads a 1000-host inventory: the
// limits must leave it several times its size.
func TestLimitsAreFarAboveRealDocuments(t *testing.T) {
	doc := inventory(1000)
	if n := len(lexer.Tokenize(doc)); n*5 > maxTokens {
		t.Errorf("a 1000-host inventory is %d tokens, more than a fifth of the limit %d", n, maxTokens)
	}
	c, fs, err := ParseCluster("hosts.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("a 1000-host inventory does not load: %v\n%s", err, fs)
	}
	if len(c.Spec.Hosts) != 1000 {
		t.Fatalf("loaded %d hosts", len(c.Spec.Hosts))
	}
}

// inventory is a valid inventory of n hosts, each with the fields a real
// one sets.
func inventory(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: colonel-byte.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: big\nspec:\n  config:\n    loadbalancer: 10.255.0.1\n  hosts:\n")
	for i := range n {
		role := "worker"
		if i < 3 {
			role = "controller"
		}
		fmt.Fprintf(&b, "    - hostname: node-%d\n      role: %s\n      privateAddress: 10.1.%d.%d\n      ssh:\n"+
			"        address: 10.2.%d.%d\n        user: admin\n        port: 22\n        keyPath: ~/.ssh/prod\n"+
			"      labels:\n        example.com/zone: eu-1a\n        rack: r%d\n",
			i, role, i>>8&255, i&255, i>>8&255, i&255, i%40)
	}
	return b.String()
}

// FuzzKeyCount checks the key count never falls below the parser's: for
// any document that parses, a limit one under its largest mapping must
// refuse it, or a mapping could reach the parser's quadratic cost unseen.
func FuzzKeyCount(f *testing.F) {
	for _, doc := range []string{
		"a: 1\nb: 2\n", "m:\n  a: 1\n  b: 2\n", "- a: 1\n  b: 2\n- c: 3\n", "&x a: 1\n!!str b: 2\n",
		"? a\n: 1\n? b\n: 2\n", "a: |\n  x\nb: >\n  y\nc: 1\n", "m: {a: 1, b: 2}\n", "\"a\": 1\n'b': 2\n",
		"a:\n- 1\nb: 1\n", "<<: {x: 1}\na: 1\n", "a: 1 # c\n# d\nb: 2\n",
	} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		tokens, f := scanShape("x.yaml", []byte(doc), documentLimits)
		if f != nil {
			return
		}
		parsed, err := parser.Parse(tokens, 0)
		if err != nil {
			return
		}
		most := 0
		for _, d := range parsed.Docs {
			if d.Body == nil {
				continue
			}
			for _, n := range ast.Filter(ast.MappingType, d.Body) {
				most = max(most, len(n.(*ast.MappingNode).Values))
			}
		}
		if most < 2 {
			return
		}
		if _, f := scanShape("x.yaml", []byte(doc), shapeLimits{tokens: maxTokens, keys: most - 1, aliases: maxAliases}); f == nil {
			t.Fatalf("a mapping of %d keys passes a limit of %d:\n%s", most, most-1, doc)
		}
	})
}

// FuzzTokenBound checks the raw count bounds the lexer's tokens within
// the factor of two its limit allows for.
func FuzzTokenBound(f *testing.F) {
	for _, doc := range []string{"a: [1, {b: c}]\n", "- |\n- >-\n-\n", "&a k: *a\n", "--- a\n...\n", "\"x\\\"y\": 'z''w'\n", "a: b#c #d\n"} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		// The count must reach half the tokens, rounded up.
		n := len(lexer.Tokenize(doc))
		if n > 0 && checkTokenBound("x.yaml", []byte(doc), (n-1)/2) == nil {
			t.Fatalf("%d lexer tokens, yet the count stays at %d or under:\n%q", n, (n-1)/2, doc)
		}
	})
}
