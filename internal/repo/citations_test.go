package repo

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// docRef is a path to a document of this repository, as comments cite it.
	docRef = regexp.MustCompile(`\b(docs/[A-Za-z0-9_./-]+\.md)(?:\s*(§\s*[0-9]+(?:\.[0-9]+)*|[0-9]+(?:\.[0-9]+)+\b))?`)
	// outside are documents contributors do not have: the specification
	// and reference material the project was started from.
	outside = regexp.MustCompile(`\bseeds/[0-9]|\.\./shared/|(^|[^/A-Za-z])(hosts|engines)\.md\b`)
)

// Every document a Go file cites must be in the repository, with the
// section it names: a citation a contributor cannot follow explains
// nothing.
func TestEveryCitedDocumentIsInTheRepository(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "build" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(data), "\n") {
			if outside.MatchString(line) && !strings.Contains(line, "docs/reference/") {
				t.Errorf("%s:%d cites a document outside the repository: %s", rel, i+1, strings.TrimSpace(line))
			}
			if strings.HasSuffix(p, "_test.go") && strings.Contains(line, `"docs/`) {
				continue // a test's own data, not a citation
			}
			for _, m := range docRef.FindAllStringSubmatch(line, -1) {
				doc := filepath.Join(root, m[1])
				if _, ok := headings[doc]; !ok {
					b, err := os.ReadFile(doc)
					if err != nil {
						t.Errorf("%s:%d cites %s, which does not exist", rel, i+1, m[1])
						continue
					}
					headings[doc] = string(b)
				}
				if sec := strings.TrimSpace(strings.TrimPrefix(m[2], "§")); sec != "" && !hasSection(headings[doc], sec) {
					t.Errorf("%s:%d cites %s section %s, which it does not have", rel, i+1, m[1], sec)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasSection reports whether a Markdown document has a heading numbered
// sec ("## 3. sysctl", "### 3.1 Files").
func hasSection(doc, sec string) bool {
	h := regexp.MustCompile(`(?m)^#+\s+` + regexp.QuoteMeta(sec) + `\.?\s`)
	return h.MatchString(doc)
}
