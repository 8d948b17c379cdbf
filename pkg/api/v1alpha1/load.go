package v1alpha1

import (
	"errors"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// maxDocumentSize bounds what a loader reads: an inventory or a definition is
// kilobytes, and a runaway file should fail clearly rather than eat memory.
const maxDocumentSize = 8 << 20

// document is one parsed YAML file on its way into a Go value.
type document struct {
	file     string
	body     ast.Node
	pos      positioner
	findings Findings
}

func (d *document) add(sev Severity, path, format string, args ...any) {
	line, col := d.pos.position(path, false)
	d.findings = append(d.findings, Finding{
		Severity: sev, File: d.file, Line: line, Column: col, Path: path,
		Message: fmt.Sprintf(format, args...),
	})
}

func (d *document) errorf(path, format string, args ...any) {
	d.add(SeverityError, path, format, args...)
}

func (d *document) warnf(path, format string, args ...any) {
	d.add(SeverityWarning, path, format, args...)
}

// readDocument reads a file and parses it, refusing oversize input.
func readDocument(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a YAML document", path)
	}
	if st.Size() > maxDocumentSize {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a document may be", path, st.Size(), maxDocumentSize)
	}
	return os.ReadFile(path)
}

// decode parses data as exactly one YAML document and decodes it into v,
// collecting syntax, type and unknown-field findings. It returns false when
// the document could not be decoded at all.
func decode(file string, data []byte, v any) (*document, bool) {
	return decodeDocument(file, data, v, true)
}

// decodeAny is decode for a document that is a mapping of settings rather
// than apiVersion/kind/metadata/spec.
func decodeAny(file string, data []byte, v any) (*document, bool) {
	return decodeDocument(file, data, v, false)
}

func decodeDocument(file string, data []byte, v any, isResource bool) (*document, bool) {
	d := &document{file: file}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		d.findings = append(d.findings, yamlFinding(file, err))
		return d, false
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc.Body != nil {
			if _, isComment := doc.Body.(*ast.CommentGroupNode); isComment {
				continue
			}
			bodies = append(bodies, doc.Body)
		}
	}
	switch len(bodies) {
	case 0:
		d.findings = append(d.findings, Finding{Severity: SeverityError, File: file, Message: "the document is empty"})
		return d, false
	case 1:
	default:
		line, col := 0, 0
		if t := bodies[1].GetToken(); t != nil {
			line, col = t.Position.Line, t.Position.Column
		}
		d.findings = append(d.findings, Finding{Severity: SeverityError, File: file, Line: line, Column: col,
			Message: fmt.Sprintf("holds %d YAML documents; one file is one document", len(bodies))})
		return d, false
	}
	d.body = bodies[0]
	d.pos = positioner{root: d.body}
	if _, ok := unwrap(d.body).(*ast.MappingNode); !ok {
		if isResource {
			d.errorf("", "the document must be a mapping with apiVersion, kind, metadata and spec")
		} else {
			d.errorf("", "the document must be a mapping of settings")
		}
		return d, false
	}
	walkUnknown(d, d.body, typeOf(v), "")
	if err := yaml.NodeToValue(d.body, v); err != nil {
		d.findings = append(d.findings, yamlFinding(file, err))
		return d, false
	}
	return d, true
}

// yamlFinding turns a parser or decoder error into a located finding.
func yamlFinding(file string, err error) Finding {
	f := Finding{Severity: SeverityError, File: file, Message: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		f.Message = ye.GetMessage()
		if t := ye.GetToken(); t != nil {
			f.Line, f.Column = t.Position.Line, t.Position.Column
		}
	}
	return f
}
