package v1alpha1

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The document corpus lives under testdata/{valid,invalid}/{cluster,distro,settings}.
// Each file states what loading it must report, in comment lines anywhere in
// the file:
//
//	# want: 14:9 spec.hosts[1].ssh.port not a port
//	# warn: 12:5 spec.hosts an even number
//
// "want" is an error, "warn" a warning: line:column, the field path ("-" for
// none), then an optional message substring. Every expectation must be met
// and no finding may go unexpected, so a file with no "want" lines must load.

// expectation is one "# want:" or "# warn:" line.
type expectation struct {
	severity     Severity
	line, column int
	path         string
	message      string
	source       int // line of the file that states it
}

func (e expectation) String() string {
	return fmt.Sprintf("%s %d:%d %s %q (stated on line %d)", e.severity, e.line, e.column, e.path, e.message, e.source)
}

// The path may quote a key with spaces: sysctl["vm.max map count"].
var expectLine = regexp.MustCompile(`^\s*# (want|warn): (\d+):(\d+) ((?:[^\s"]|"(?:[^"\\]|\\.)*")+)(?: (.*))?$`)

// readExpectations collects a corpus file's expectations.
func readExpectations(t *testing.T, data []byte) []expectation {
	t.Helper()
	var out []expectation
	for i, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "# want:") && !strings.Contains(l, "# warn:") {
			continue
		}
		m := expectLine.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			t.Fatalf("line %d: malformed expectation %q (want: LINE:COL PATH [message])", i+1, l)
		}
		e := expectation{severity: SeverityError, path: m[4], message: strings.TrimSpace(m[5]), source: i + 1}
		if m[1] == "warn" {
			e.severity = SeverityWarning
		}
		e.line, _ = strconv.Atoi(m[2])
		e.column, _ = strconv.Atoi(m[3])
		if e.path == "-" {
			e.path = ""
		}
		out = append(out, e)
	}
	return out
}

func (e expectation) matches(f Finding) bool {
	return f.Severity == e.severity && f.Line == e.line && f.Column == e.column &&
		f.Path == e.path && strings.Contains(f.Message, e.message)
}

// loadKind parses data as the document kind its corpus directory names.
func loadKind(kind, file string, data []byte) (Findings, error) {
	switch kind {
	case "cluster":
		c, fs, err := ParseCluster(file, data)
		if err == nil && c == nil {
			return fs, fmt.Errorf("ParseCluster returned no document and no error")
		}
		return fs, err
	case "distro":
		d, fs, err := ParseDistro(file, data)
		if err == nil && d == nil {
			return fs, fmt.Errorf("ParseDistro returned no document and no error")
		}
		return fs, err
	case "settings":
		s, fs, err := ParseSettings(file, data)
		if err == nil && s == nil {
			return fs, fmt.Errorf("ParseSettings returned no document and no error")
		}
		return fs, err
	}
	return nil, fmt.Errorf("unknown corpus kind %q", kind)
}

// checkCorpusFile loads one corpus file and compares findings with its
// expectations both ways.
func checkCorpusFile(t *testing.T, kind, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wants := readExpectations(t, data)
	findings, err := loadKind(kind, path, data)
	wantErr := false
	for _, w := range wants {
		wantErr = wantErr || w.severity == SeverityError
	}
	switch {
	case wantErr && err == nil:
		t.Errorf("loaded without error; want errors")
	case !wantErr && err != nil:
		t.Errorf("want no error, got: %v", err)
	}
	if err != nil && findings.HasErrors() {
		var de *DocumentError
		if !errors.As(err, &de) {
			t.Errorf("error is %T, want *DocumentError", err)
		}
	}
	for _, f := range findings {
		if f.File != path {
			t.Errorf("finding names file %q, want %q: %s", f.File, path, f)
		}
	}
	for _, problem := range compareFindings(wants, findings) {
		t.Error(problem)
	}
}

// compareFindings lists every expectation no finding meets and every
// finding no expectation states; nil means they agree exactly.
func compareFindings(wants []expectation, findings Findings) []string {
	var problems []string
	used := make([]bool, len(findings))
	for _, w := range wants {
		found := false
		for i, f := range findings {
			if !used[i] && w.matches(f) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			problems = append(problems, "missing "+w.String())
		}
	}
	for i, f := range findings {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("unexpected %s: %s", f.Severity, f))
		}
	}
	return problems
}

// TestCompareFindings proves the corpus check fails on each kind of
// disagreement, so a passing corpus means what it says.
func TestCompareFindings(t *testing.T) {
	f := Finding{Severity: SeverityError, File: "x.yaml", Line: 14, Column: 9, Path: "spec.hosts[1].ssh.port", Message: "70000 is not a port"}
	w := expectation{severity: SeverityError, line: 14, column: 9, path: "spec.hosts[1].ssh.port", message: "not a port"}
	if p := compareFindings([]expectation{w}, Findings{f}); p != nil {
		t.Fatalf("an exact match disagrees: %v", p)
	}
	mutate := map[string]func(*expectation){
		"line":     func(e *expectation) { e.line++ },
		"column":   func(e *expectation) { e.column-- },
		"path":     func(e *expectation) { e.path = "spec.hosts[0].ssh.port" },
		"message":  func(e *expectation) { e.message = "is required" },
		"severity": func(e *expectation) { e.severity = SeverityWarning },
	}
	for name, m := range mutate {
		e := w
		m(&e)
		if p := compareFindings([]expectation{e}, Findings{f}); len(p) != 2 {
			t.Errorf("a wrong %s gives %v, want a missing and an unexpected finding", name, p)
		}
	}
	if p := compareFindings(nil, Findings{f}); len(p) != 1 {
		t.Errorf("an unstated finding gives %v", p)
	}
	if p := compareFindings([]expectation{w, w}, Findings{f}); len(p) != 1 {
		t.Errorf("one finding met two expectations: %v", p)
	}
}

func TestReadExpectations(t *testing.T) {
	data := []byte("# want: 3:5 spec.config.os.sysctl[\"vm.max map count\"] is not a sysctl key\n" +
		"# warn: 11:5 spec.hosts\n# want: 0:0 - the document is empty\nkind: Cluster\n")
	got := readExpectations(t, data)
	want := []expectation{
		{severity: SeverityError, line: 3, column: 5, path: `spec.config.os.sysctl["vm.max map count"]`, message: "is not a sysctl key", source: 1},
		{severity: SeverityWarning, line: 11, column: 5, path: "spec.hosts", source: 2},
		{severity: SeverityError, path: "", message: "the document is empty", source: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d expectations, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("expectation %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestCorpus(t *testing.T) {
	n := map[string]int{}
	for _, set := range []string{"valid", "invalid"} {
		for _, kind := range []string{"cluster", "distro", "settings"} {
			files, err := filepath.Glob(filepath.Join("testdata", set, kind, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				n[set]++
				t.Run(set+"/"+kind+"/"+filepath.Base(f), func(t *testing.T) {
					if set == "valid" {
						data, err := os.ReadFile(f)
						if err != nil {
							t.Fatal(err)
						}
						for _, e := range readExpectations(t, data) {
							if e.severity == SeverityError {
								t.Fatalf("a valid document expects an error: %s", e)
							}
						}
					}
					checkCorpusFile(t, kind, f)
				})
			}
		}
	}
	if n["invalid"] < 30 || n["valid"] < 10 {
		t.Errorf("corpus holds %d invalid and %d valid documents; it should hold at least 30 and 10", n["invalid"], n["valid"])
	}
}

// TestCorpusInvalidNeedsWant keeps the invalid corpus honest: a file there
// must state at least one error, or it proves nothing.
func TestCorpusInvalidNeedsWant(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^\d\d-[a-z0-9-]+\.yaml$`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !name.MatchString(filepath.Base(f)) {
			t.Errorf("%s: name invalid cases NN-what-is-wrong.yaml", f)
		}
		hasErr := false
		for _, e := range readExpectations(t, data) {
			hasErr = hasErr || e.severity == SeverityError
		}
		if !hasErr {
			t.Errorf("%s states no '# want:' error", f)
		}
	}
}
