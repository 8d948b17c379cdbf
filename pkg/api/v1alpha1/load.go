package v1alpha1

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

// maxDocumentSize bounds what a loader reads: an inventory or a definition is
// kilobytes (1000 hosts: 250 KB), and a runaway file should fail clearly
// rather than eat memory. The YAML lexer holds about 30 bytes per byte of
// one long string, so 4 MiB keeps any document under 256 MiB.
const maxDocumentSize = 4 << 20

// document is one parsed YAML file on its way into a Go value.
type document struct {
	file     string
	body     ast.Node
	pos      positioner
	findings Findings
}

func (d *document) add(sev Severity, path, format string, args ...any) {
	d.addAt(sev, false, path, format, args...)
}

// addAt records a finding at the field's value, or at its key when onKey:
// a map key that is itself wrong (a sysctl name, a label key) is pointed at.
func (d *document) addAt(sev Severity, onKey bool, path, format string, args ...any) {
	line, col := d.pos.position(path, onKey)
	d.findings = append(d.findings, Finding{
		Severity: sev, File: d.file, Line: line, Column: col, Path: path,
		Message: fmt.Sprintf(format, args...),
	})
}

func (d *document) errorf(path, format string, args ...any) {
	d.add(SeverityError, path, format, args...)
}

// keyErrorf reports a map key that is not a valid name, at the key.
func (d *document) keyErrorf(path, format string, args ...any) {
	d.addAt(SeverityError, true, path, format, args...)
}

func (d *document) warnf(path, format string, args ...any) {
	d.add(SeverityWarning, path, format, args...)
}

// readDocument reads a file, refusing oversize input and anything that is
// not a regular file (/dev/zero, a FIFO).
func readDocument(path string) ([]byte, error) {
	data, err := localfile.Read(path, maxDocumentSize)
	if err != nil {
		return nil, fmt.Errorf("a YAML document: %w", err)
	}
	return data, nil
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

// docKind says what a file must hold at its top and how far its shape
// may go.
type docKind struct {
	top     string // what the top must be: "a mapping of settings"
	emptyOK bool   // an empty file is a valid, empty document
	limits  shapeLimits
}

var (
	resourceDoc = docKind{top: "a mapping with apiVersion, kind, metadata and spec", limits: documentLimits}
	settingsDoc = docKind{top: "a mapping of settings", emptyOK: true, limits: documentLimits}
)

func decodeDocument(file string, data []byte, v any, isResource bool) (*document, bool) {
	kind := settingsDoc
	if isResource {
		kind = resourceDoc
	}
	d, ok := parseDocument(file, data, kind)
	if !ok || d.body == nil {
		return d, ok
	}
	if !checkAliases(d) {
		return d, false
	}
	if misshapen := walkUnknown(d, d.body, typeOf(v), ""); misshapen > 0 {
		// The decoder would stop at the first of these; all are reported.
		return d, false
	}
	// Duplicate keys are refused by the parser already; what the decoder
	// would still call one is a key overriding a merged (<<) one, which YAML
	// allows.
	if err := yaml.NodeToValue(d.body, v, yaml.AllowDuplicateMapKey()); err != nil {
		d.decodeError(err)
		return d, false
	}
	return d, true
}

// parseDocument parses data as exactly one YAML document whose top is a
// mapping, after the checks that bound what parsing costs: size, nesting
// and shape. It returns false with the findings when any fails; d.body is
// nil for an empty document kind allows.
func parseDocument(file string, data []byte, kind docKind) (*document, bool) {
	d := &document{file: file}
	if len(data) > maxDocumentSize {
		d.findings = append(d.findings, Finding{Severity: SeverityError, File: file,
			Message: fmt.Sprintf("is %d bytes, more than the %d a document may be", len(data), maxDocumentSize)})
		return d, false
	}
	if f := checkNesting(file, data); f != nil {
		d.findings = append(d.findings, *f)
		return d, false
	}
	if f := checkTokenBound(file, data, kind.limits.tokens); f != nil {
		d.findings = append(d.findings, *f)
		return d, false
	}
	tokens, f := scanShape(file, data, kind.limits)
	if f != nil {
		d.findings = append(d.findings, *f)
		return d, false
	}
	parsed, err := parser.Parse(tokens, 0)
	if err != nil {
		d.findings = append(d.findings, yamlFinding(file, err))
		return d, false
	}
	var bodies []ast.Node
	for _, doc := range parsed.Docs {
		if doc.Body != nil {
			if _, isComment := doc.Body.(*ast.CommentGroupNode); isComment {
				continue
			}
			bodies = append(bodies, doc.Body)
		}
	}
	switch len(bodies) {
	case 0:
		if kind.emptyOK {
			return d, true // an empty settings file sets nothing
		}
		d.findings = append(d.findings, Finding{Severity: SeverityError, File: file, Message: "the document is empty"})
		return d, false
	case 1:
	default:
		line, col := 0, 0
		if t := tokenOf(unwrap(bodies[1])); t != nil {
			line, col = t.Position.Line, t.Position.Column
		}
		d.findings = append(d.findings, Finding{Severity: SeverityError, File: file, Line: line, Column: col,
			Message: fmt.Sprintf("holds %d YAML documents; one file is one document", len(bodies))})
		return d, false
	}
	d.body = bodies[0]
	d.pos = positioner{root: d.body}
	if _, ok := unwrap(d.body).(*ast.MappingNode); !ok {
		d.errorf("", "the document must be %s", kind.top)
		return d, false
	}
	return d, true
}

// decodeError records a decoder error at the token and field it names.
func (d *document) decodeError(err error) {
	f := yamlFinding(d.file, err)
	f.Path = pathAt(d.body, errorToken(err))
	d.findings = append(d.findings, f)
}

// yamlFinding turns a parser or decoder error into a located finding.
func yamlFinding(file string, err error) Finding {
	f := Finding{Severity: SeverityError, File: file, Message: decodeMessage(err)}
	if t := errorToken(err); t != nil && t.Position != nil {
		f.Line, f.Column = t.Position.Line, t.Position.Column
	}
	return f
}

// errorToken is the token a parser or decoder error points at, if any.
func errorToken(err error) *token.Token {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return ye.GetToken()
	}
	return nil
}

// decodeMessage says what a decoder error means in the document's terms
// rather than Go's ("Go struct field Cluster.Spec of type int").
func decodeMessage(err error) string {
	var (
		te *yaml.TypeError
		oe *yaml.OverflowError
		ue *yaml.UnexpectedNodeTypeError
		ye yaml.Error
	)
	switch {
	case errors.As(err, &te):
		got := "this value"
		if te.Token != nil {
			got = quoteShort(te.Token.Value)
		}
		return fmt.Sprintf("want %s, got %s", goKind(te.DstType), got)
	case errors.As(err, &oe):
		return fmt.Sprintf("%s is too large for %s", oe.SrcNum, goKind(oe.DstType))
	case errors.As(err, &ue):
		return fmt.Sprintf("want %s, got %s", nodeKind(ue.Expected), nodeKind(ue.Actual))
	case errors.As(err, &ye):
		return ye.GetMessage()
	}
	return err.Error()
}
