package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const docsDir = "../../../docs"

// docPages pairs each document type with the page that documents it.
var docPages = []struct {
	page  string
	value any
}{
	{"cluster.md", Cluster{}},
	{"distro.md", Distro{}},
	{"settings.md", Settings{}},
}

// fieldPaths lists every field of a document as the pages spell it:
// spec.hosts[].ssh.address. A struct type is listed once, at the first path
// that reaches it (fields in declaration order); later paths that reach it
// again (ssh.bastion, the host's firewall rules) stop there, and the page
// says "same fields as ...".
func fieldPaths(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out = append(out, p)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
				p += "[]"
			}
			walk(ft, p)
		}
	}
	walk(t, "")
	return out
}

var (
	tableFirstCell = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	yamlBlock      = regexp.MustCompile("(?s)```yaml\\n(.*?)```")
)

// TestDocsNameEveryField fails when a field has no row on its page, and
// when a row names a field that does not exist.
func TestDocsNameEveryField(t *testing.T) {
	for _, dp := range docPages {
		data, err := os.ReadFile(filepath.Join(docsDir, dp.page))
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]bool{}
		for _, m := range tableFirstCell.FindAllStringSubmatch(string(data), -1) {
			rows[m[1]] = true
		}
		paths := fieldPaths(reflect.TypeOf(dp.value))
		known := map[string]bool{}
		for _, p := range paths {
			known[p] = true
			if !rows[p] {
				t.Errorf("docs/%s has no table row for `%s`", dp.page, p)
			}
		}
		for r := range rows {
			if !known[r] {
				t.Errorf("docs/%s has a row for `%s`, which is no field", dp.page, r)
			}
		}
	}
}

// TestDocsExamplesLoad loads every complete document shown in docs/*.md: a
// yaml block whose first line that is not a comment starts with apiVersion:
// or kind: (a cluster or a distro definition), or whose first line is
// "# cargoship-config.yaml" (settings). Each must load without an error.
func TestDocsExamplesLoad(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			block := m[1]
			kind := exampleKind(block)
			if kind == "" {
				continue
			}
			counts[kind]++
			name := fmt.Sprintf("%s#%d", filepath.Base(page), i+1)
			var fs Findings
			switch kind {
			case KindCluster, KindLegacyCluster:
				_, fs, err = ParseCluster(name, []byte(block))
			case KindDistro:
				_, fs, err = ParseDistro(name, []byte(block))
			case "settings":
				_, fs, err = ParseSettings(name, []byte(block))
			default:
				t.Errorf("%s: a yaml block of kind %q, which no loader reads", name, kind)
				continue
			}
			if err != nil {
				t.Errorf("%s does not load:\n%s\n%s", name, fs, block)
			}
		}
	}
	for _, kind := range []string{KindCluster, KindDistro, "settings"} {
		if counts[kind] == 0 {
			t.Errorf("docs show no complete %s document", kind)
		}
	}
}

// exampleKind says which document a yaml block is, or "" for a fragment.
func exampleKind(block string) string {
	if strings.HasPrefix(block, "# cargoship-config.yaml") {
		return "settings"
	}
	for _, line := range strings.Split(block, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || trimmed == "---" {
			continue
		}
		if !strings.HasPrefix(line, "apiVersion:") && !strings.HasPrefix(line, "kind:") {
			return ""
		}
		break
	}
	m := regexp.MustCompile(`(?m)^kind:\s*(\S+)`).FindStringSubmatch(block)
	if m == nil {
		return "unknown"
	}
	return strings.Trim(m[1], `"'`)
}

func TestExampleKind(t *testing.T) {
	cases := map[string]string{
		"apiVersion: colonel-byte.dev/v1alpha1\nkind: Cluster\n": KindCluster,
		"# comment\n---\nkind: ZarfDistro\nspec: {}\n":           KindDistro,
		"# cargoship-config.yaml\nlog_level: info\n":             "settings",
		"spec:\n  hosts: []\nkind: Cluster\n":                    "",
		"apiVersion: v1\n":                                       "unknown",
	}
	for block, want := range cases {
		if got := exampleKind(block); got != want {
			t.Errorf("exampleKind(%q) = %q, want %q", block, got, want)
		}
	}
}
