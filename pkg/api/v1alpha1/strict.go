package v1alpha1

import "github.com/goccy/go-yaml"

// strictDoc is a document cargoship wrote itself (a package's manifest):
// the document limits, and no aliases, since its writer makes none.
var strictDoc = docKind{top: "a mapping", limits: shapeLimits{tokens: maxTokens, keys: maxMappingKeys}}

// Strict is a document DecodeStrict decoded. Errorf records a problem a
// later check finds, at the line of the field it names.
type Strict struct {
	d *document
}

// DecodeStrict decodes data into v through the guards every document
// passes (size, nesting, tokens, keys per mapping, one YAML document, a
// mapping at the top), refusing any alias and any key v has no field for.
// The error is a *DocumentError whose findings name file, line and field.
func DecodeStrict(file string, data []byte, v any) (*Strict, error) {
	d, ok := parseDocument(file, data, strictDoc)
	if ok {
		if err := yaml.NodeToValue(d.body, v, yaml.DisallowUnknownField()); err != nil {
			d.decodeError(err)
		}
	}
	s := &Strict{d: d}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// ValidateDistro checks ds, decoded from the document's top level, by a
// definition's rules, with each problem at its line of this document, and
// fills in the defaults.
func (s *Strict) ValidateDistro(ds *Distro) {
	validateDistro(s.d, ds)
	ds.SetDefaults()
}

// Errorf records an error at the field path (package.entries[2].target).
func (s *Strict) Errorf(path, format string, args ...any) {
	s.d.errorf(path, format, args...)
}

// Err is a *DocumentError with every error recorded, or nil.
func (s *Strict) Err() error {
	if _, _, err := result(&struct{}{}, s.d); err != nil {
		return err
	}
	return nil
}
