package testtier

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Counts is what a `go test -json` stream ran.
type Counts struct {
	Passed, Failed, Skipped int
	// BuildFailed is the packages whose tests did not build.
	BuildFailed int
}

// OK reports whether nothing failed.
func (c Counts) OK() bool { return c.Failed == 0 && c.BuildFailed == 0 }

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// Summarize reads a `go test -json` stream from r and writes to w what
// `go test` without -json would (each package's ok/FAIL line, the output
// of failed tests, build errors), then every skipped test with the reason
// it gave, so a green run says what it did not run.
func Summarize(r io.Reader, w io.Writer) (Counts, error) {
	var c Counts
	type key struct{ pkg, test string }
	out := map[key][]string{}
	type skip struct {
		pkg, test string
		why       []string
	}
	var skips []skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// go test writes some errors (a package that does not load)
			// as plain text.
			_, _ = fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			_, _ = io.WriteString(w, e.Output)
		case e.Action == "build-fail":
			c.BuildFailed++
		case e.Test == "" && e.Action == "output":
			// The package's own lines: ok, FAIL, "no test files", panics
			// outside a test; not the test binary's PASS, which go test
			// without -v leaves out.
			if e.Output != "PASS\n" {
				_, _ = io.WriteString(w, e.Output)
			}
		case e.Test == "":
		case e.Action == "output":
			out[k] = append(out[k], e.Output)
		case e.Action == "pass":
			c.Passed++
			delete(out, k)
		case e.Action == "fail":
			c.Failed++
			_, _ = io.WriteString(w, strings.Join(out[k], ""))
			delete(out, k)
		case e.Action == "skip":
			c.Skipped++
			skips = append(skips, skip{e.Package, e.Test, reason(out[k])})
			delete(out, k)
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	sort.SliceStable(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	if len(skips) > 0 {
		_, _ = fmt.Fprintf(w, "\nskipped %d tests (the reason each gave):\n", len(skips))
		for _, s := range skips {
			_, _ = fmt.Fprintf(w, "  %s %s\n", s.pkg, s.test)
			for _, l := range s.why {
				_, _ = fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
	_, _ = fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
	if c.BuildFailed > 0 {
		_, _ = fmt.Fprintf(w, ", %d packages did not build", c.BuildFailed)
	}
	_, _ = fmt.Fprintln(w)
	return c, nil
}

// reason is a skipped test's output without the lines go test adds
// (=== RUN, --- SKIP, ...): what the test said when it skipped.
func reason(lines []string) []string {
	var why []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		why = append(why, l)
	}
	return why
}
