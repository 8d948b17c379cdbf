//go:build linux

package v1alpha1

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/internal/costtest"
)

// Each document below is parsed in a child process (this test binary run
// again), so its time and peak memory are its own, and a parse that would
// run for minutes is killed at the bound instead of waited for. The bound
// is the one validate promises: 5 s and 256 MiB.
const (
	costTime    = 5 * time.Second
	costMemory  = 256 << 20
	costCaseEnv = "CARGOSHIP_V1ALPHA1_COST_CASE"
)

const costHead = "kind: ZarfDistro\nmetadata: {name: a}\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config:\n    engine:\n      config:\n"

// costCase is a document and the finding loading it must report, as a
// regular expression ("" to load).
type costCase struct {
	doc  func() string
	want string
}

const (
	wantTooLarge  = `^x\.yaml: is \d+ bytes, more than the 4194304 a document may be`
	wantTooMany   = `^x\.yaml:\d+:\d+: holds more than 200000 YAML tokens`
	wantManyKeys  = `^x\.yaml:10:11: the mapping that starts here holds more than 2000 keys \(key 2001 is on line 2010\)`
	wantExpansion = `^x\.yaml:\d+:\d+: aliases expand the document to more than`
)

var costCases = map[string]costCase{
	// The issue's own: minutes and gigabytes before the bounds.
	"a 400k-key mapping":            {func() string { return keys(400_000) }, wantTooLarge},
	"a 7 MB deeply nested document": {func() string { return flowNests(7_000_000, 190) }, wantTooLarge},
	"a 7 MB flow list":              {func() string { return flowList(7_000_000) }, wantTooLarge},
	// Under the size limit, each refused by one shape limit.
	"a 60k-key mapping":             {func() string { return keys(60_000) }, wantManyKeys},
	"a 4 MB deeply nested document": {func() string { return flowNests(4_000_000, 190) }, wantTooMany},
	"a 4 MB flow list":              {func() string { return flowList(4_000_000) }, wantTooMany},
	"10k aliases of a large anchor": {aliasesOfLargeAnchor, wantExpansion},
	// Real and near-limit documents still load.
	"a 1000-host inventory": {func() string { return inventory(1000) }, ""},
	"a 4 MB string":         {bigLiteral, ""},
	"195k tokens 190 deep":  {func() string { return flowNests(202_000, 190) }, ""},
}

func TestMain(m *testing.M) {
	if name := os.Getenv(costCaseEnv); name != "" {
		os.Exit(costChild(name))
	}
	os.Exit(m.Run())
}

// costChild loads one case's document and prints its findings.
func costChild(name string) int {
	c, ok := costCases[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no cost case %q\n", name)
		return 2
	}
	doc := c.doc()
	load := func(file string, data []byte) (Findings, error) {
		_, fs, err := ParseDistro(file, data)
		return fs, err
	}
	if strings.HasPrefix(doc, "apiVersion: colonel-byte.dev/v1alpha1\nkind: Cluster") {
		load = func(file string, data []byte) (Findings, error) {
			_, fs, err := ParseCluster(file, data)
			return fs, err
		}
	}
	fs, err := load("x.yaml", []byte(doc))
	if err == nil {
		fmt.Println("loaded")
	} else {
		fmt.Println(fs.String())
	}
	costtest.PrintPeakRSS()
	return 0
}

func TestCraftedDocumentsStayCheap(t *testing.T) {
	for name, c := range costCases {
		t.Run(name, func(t *testing.T) {
			out, took, rss := costtest.RunChild(t, costCaseEnv, name, costTime)
			switch {
			case c.want == "" && out != "loaded\n":
				t.Errorf("refused:\n%s", out)
			case c.want != "" && !regexp.MustCompile(c.want).MatchString(out):
				t.Errorf("want a finding matching %s, got:\n%.2000s", c.want, out)
			}
			if rss > costMemory {
				t.Errorf("peak memory %d MiB, more than %d", rss>>20, costMemory>>20)
			}
			t.Logf("%v, %d MiB", took.Round(time.Millisecond), rss>>20)
		})
	}
}

// keys is one block mapping of n keys.
func keys(n int) string {
	var b strings.Builder
	b.WriteString(costHead + "        x:\n")
	for i := range n {
		fmt.Fprintf(&b, "          k%d: v\n", i)
	}
	return b.String()
}

// flowNests is size bytes of lists nested depth deep.
func flowNests(size, depth int) string {
	var b strings.Builder
	b.WriteString(costHead + "        x:\n")
	line := "          - " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	for b.Len()+len(line) <= size {
		b.WriteString(line)
	}
	return b.String()
}

// flowList is one flow list of size bytes.
func flowList(size int) string {
	var b strings.Builder
	b.WriteString(costHead + "        x: [")
	for b.Len() < size-3 {
		b.WriteString("1,")
	}
	b.WriteString("1]\n")
	return b.String()
}

// aliasesOfLargeAnchor names a 150k-value mapping 10k times: expanding it
// is 1.5G values, and each alias once searched the whole anchor for itself.
func aliasesOfLargeAnchor() string {
	var b strings.Builder
	b.WriteString(costHead + "        big: &big\n")
	for m := range 25 {
		fmt.Fprintf(&b, "          m%d:\n", m)
		for k := range maxMappingKeys {
			fmt.Fprintf(&b, "            k%d: v\n", k)
		}
	}
	b.WriteString("        refs:\n")
	for range maxAliases {
		b.WriteString("          - *big\n")
	}
	return b.String()
}

// bigLiteral is a definition holding a string just under the size limit,
// as base64 lines.
func bigLiteral() string {
	var b strings.Builder
	b.WriteString(costHead + "        x: |\n")
	line := "          " + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 2) + "\n"
	for b.Len()+len(line) < maxDocumentSize {
		b.WriteString(line)
	}
	return b.String()
}
