package v1alpha1

import (
	"errors"
	"testing"

	"github.com/goccy/go-yaml"
)

// The seed corpora live in testdata/fuzz/FuzzParseCluster and
// testdata/fuzz/FuzzParseDistro (go's corpus format); a crasher found by
// `go test -fuzz` is committed there and runs as a plain test ever after.

func FuzzParseCluster(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, fs, err := ParseCluster("fuzz.yaml", data)
		checkParseResult(t, c != nil, fs, err)
		if c == nil {
			return
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("a loaded cluster does not marshal: %v", err)
		}
		if _, fs, err := ParseCluster("again.yaml", out); err != nil {
			t.Fatalf("a loaded cluster does not load again: %v\n%s\n--- input:\n%s\n--- marshalled:\n%s", err, fs, data, out)
		}
	})
}

func FuzzParseDistro(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d, fs, err := ParseDistro("fuzz.yaml", data)
		checkParseResult(t, d != nil, fs, err)
		if d == nil {
			return
		}
		out, err := yaml.Marshal(d)
		if err != nil {
			t.Fatalf("a loaded distro does not marshal: %v", err)
		}
		if _, fs, err := ParseDistro("again.yaml", out); err != nil {
			t.Fatalf("a loaded distro does not load again: %v\n%s\n--- input:\n%s\n--- marshalled:\n%s", err, fs, data, out)
		}
	})
}

// checkParseResult holds for any input: a value or a *DocumentError, never
// both; the error carries exactly the error findings; every finding names
// the file and, but for an empty document, a line and column.
func checkParseResult(t *testing.T, loaded bool, fs Findings, err error) {
	t.Helper()
	var de *DocumentError
	switch {
	case err == nil && !loaded:
		t.Fatal("no value and no error")
	case err != nil && loaded:
		t.Fatalf("a value and an error: %v", err)
	case err != nil && !errors.As(err, &de):
		t.Fatalf("error is %T, not *DocumentError: %v", err, err)
	case err == nil && fs.HasErrors():
		t.Fatalf("loaded with error findings:\n%s", fs)
	}
	if de != nil {
		if !fs.HasErrors() {
			t.Fatalf("a DocumentError with no error findings: %v", err)
		}
		if len(de.Findings.Errors()) != len(fs.Errors()) {
			t.Fatalf("the error carries %d errors, the findings %d", len(de.Findings.Errors()), len(fs.Errors()))
		}
		if de.Error() == "" {
			t.Fatal("a DocumentError with an empty message")
		}
	}
	for _, f := range fs {
		if f.File != "fuzz.yaml" || f.Message == "" {
			t.Fatalf("finding without a file or a message: %#v", f)
		}
		if f.Severity != SeverityError && f.Severity != SeverityWarning {
			t.Fatalf("finding with severity %q: %s", f.Severity, f)
		}
		if (f.Line < 1 || f.Column < 1) && f.Message != "the document is empty" {
			t.Fatalf("finding without a position: %#v", f)
		}
	}
}
