package v1alpha1

import (
	"fmt"
	"strings"
)

// Severity says whether a finding stops a run.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem in a document, located by file, line, column and
// the field path (spec.hosts[1].role).
type Finding struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
}

func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", f.Line, f.Column)
	}
	b.WriteString(": ")
	if f.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if f.Path != "" {
		b.WriteString(f.Path)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// Findings is every problem found in one or more documents.
type Findings []Finding

// Errors returns only the findings that stop a run.
func (fs Findings) Errors() Findings { return fs.filter(SeverityError) }

// Warnings returns only the advisory findings.
func (fs Findings) Warnings() Findings { return fs.filter(SeverityWarning) }

// HasErrors reports whether any finding stops a run.
func (fs Findings) HasErrors() bool { return len(fs.Errors()) > 0 }

// Strict is fs with every warning made an error: what a strict run
// (validate or apply refusing on warnings) goes by, so an even number of
// controllers, say, stops it.
func (fs Findings) Strict() Findings {
	out := make(Findings, len(fs))
	for i, f := range fs {
		if f.Severity == SeverityWarning {
			f.Severity = SeverityError
		}
		out[i] = f
	}
	return out
}

func (fs Findings) filter(s Severity) Findings {
	var out Findings
	for _, f := range fs {
		if f.Severity == s {
			out = append(out, f)
		}
	}
	return out
}

func (fs Findings) String() string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// DocumentError is returned when a document fails to load: it carries every
// error finding, so one run reports them all.
type DocumentError struct {
	File     string
	Findings Findings
}

func (e *DocumentError) Error() string {
	errs := e.Findings.Errors()
	if len(errs) == 1 {
		return errs[0].String()
	}
	return fmt.Sprintf("%s: %d problems:\n%s", e.File, len(errs), errs.String())
}
