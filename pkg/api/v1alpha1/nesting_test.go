package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNestingBound(t *testing.T) {
	const head = "kind: ZarfDistro\nmetadata: {name: a}\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config:\n    engine:\n      config:\n"
	deepBlock := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", 8+i), i)
		}
		return b.String()
	}
	cases := []struct {
		name, body string
		refused    bool
		at         string
	}{
		{"flow, just inside", "        x: " + strings.Repeat("[", 180) + strings.Repeat("]", 180) + "\n", false, ""},
		{"flow", "        x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", true, "d.yaml:9:"},
		{"compact dashes", "        x:\n          " + strings.Repeat("- ", 100000) + "1\n", true, "d.yaml:10:"},
		{"indentation", deepBlock(300), true, "d.yaml:"},
		{"brackets that close", "        x: \"" + strings.Repeat("[]", 5000) + "\"\n", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, fs, err := ParseDistro("d.yaml", []byte(head+c.body))
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if !c.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(fs.String(), "nests more than 200 levels deep") || !strings.HasPrefix(fs.String(), c.at) {
				t.Fatalf("want %s...: nests more than 200 levels deep, got %v", c.at, fs)
			}
		})
	}
}

func TestNestingCountsWhatItSees(t *testing.T) {
	doc := "a:\n  b:\n    - - [x, {y: [1]}]\n  c: 1\n"
	// a, b, the indented "- - " line (one level) and its two dashes, then
	// three flow brackets: 1+1+1+2+3 = 8 at the innermost bracket.
	for limit, want := range map[int]bool{7: true, 8: false} {
		if got := nestingOver(doc, limit); got != want {
			t.Errorf("depth over %d = %v, want %v", limit, got, want)
		}
	}
}

// nestingOver runs checkNesting's scan with another limit.
func nestingOver(doc string, limit int) bool {
	return checkNestingLimit("x.yaml", []byte(doc), limit) != nil
}
