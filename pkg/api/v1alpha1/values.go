package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

// PortValue is a port or a range, written as an integer or a string
// ("6443", "30000-32767").
type PortValue string

// UnmarshalYAML takes the raw scalar so 443 and "443" read the same.
func (p *PortValue) UnmarshalYAML(b []byte) error {
	*p = PortValue(unquote(string(b)))
	return nil
}

// Range returns the first and last port; they are equal for a single port.
func (p PortValue) Range() (int, int, error) {
	s := string(p)
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil || a < 1 || a > 65535 {
		return 0, 0, fmt.Errorf("%q is not a port (1-65535) or a range like 30000-32767", s)
	}
	if !isRange {
		return a, a, nil
	}
	b, err := strconv.Atoi(strings.TrimSpace(hi))
	if err != nil || b < a || b > 65535 {
		return 0, 0, fmt.Errorf("%q is not a port range (low-high, 1-65535)", s)
	}
	return a, b, nil
}

// JSONSchema lets the schema accept both spellings.
func (PortValue) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "integer", Minimum: "1", Maximum: "65535"},
		{Type: "string", Pattern: `^[0-9]+(-[0-9]+)?$`},
	}}
}

// FileMode is a permission written in octal: 0644, "0644", "644", 0o644.
// The earlier tool dropped integers and rejected "600"; both work here.
type FileMode string

// UnmarshalYAML keeps the raw text so an octal literal is not read as decimal.
func (m *FileMode) UnmarshalYAML(b []byte) error {
	*m = FileMode(unquote(string(b)))
	return nil
}

// Mode parses the permission; an empty value returns def.
func (m FileMode) Mode(def uint32) (uint32, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(string(m), "0o"), "0O")
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o7777 {
		return 0, fmt.Errorf("%q is not an octal file mode like 0644", string(m))
	}
	// Files are written with the permission bits only; refused rather than
	// dropped, a setuid program would land as an ordinary one.
	if v&0o7000 != 0 {
		return 0, fmt.Errorf("%04o sets the setuid, setgid or sticky bit, which cargoship does not write; use the permission bits only (like %04o)", v, v&0o777)
	}
	return uint32(v), nil
}

// JSONSchema lets the schema accept both spellings.
func (FileMode) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "integer"},
		{Type: "string", Pattern: `^(0o?)?0?[0-7]{3}$`},
	}}
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}
