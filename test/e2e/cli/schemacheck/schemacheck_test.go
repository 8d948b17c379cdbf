package schemacheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$defs": {"Item": {"type": "object", "additionalProperties": false, "required": ["n"],
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 10}, "s": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2}}}},
  "type": "object",
  "additionalProperties": false,
  "required": ["kind", "items"],
  "properties": {
    "kind": {"type": "string", "enum": ["Report"], "description": "annotations assert nothing"},
    "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Item"}},
    "flag": {"type": ["boolean", "null"]},
    "fixed": {"const": 3}
  }
}`

// TestValidate proves each keyword can fail, so a test that finds no
// violation in a report means something.
func TestValidate(t *testing.T) {
	for doc, want := range map[string][]string{
		`{"kind":"Report","items":[{"n":1,"s":"ab"}],"flag":null,"fixed":3.0}`: nil,
		`{"kind":"Report","items":[{"n":1.0}]}`:                                nil,
		`{"items":[{"n":1}]}`:                                                  {`(document): "kind" is required`},
		`{"kind":"Plan","items":[{"n":1}]}`:                                    {`kind: "Plan" is not one of [Report]`},
		`{"kind":"Report","items":[{"n":1}],"extra":true}`:                     {"extra: unknown key"},
		`{"kind":"Report","items":[]}`:                                         {"items: 0 items, want at least 1"},
		`{"kind":"Report","items":[{"n":-1},{"n":11},{"n":1.5}]}`: {
			"items[0].n: -1 is below the minimum 0", "items[1].n: 11 is above the maximum 10", "items[2].n: want integer, got 1.5",
		},
		`{"kind":"Report","items":[{"n":1,"s":"A"}]}`:      {`items[0].s: "A" is shorter than 2`, `items[0].s: "A" does not match ^[a-z]+$`},
		`{"kind":"Report","items":[{"n":1}],"flag":"yes"}`: {`flag: want [boolean null], got "yes"`},
		`{"kind":"Report","items":[{"n":1}],"fixed":4}`:    {"fixed: 4 is not 3"},
		`{"kind":"Report","items":{"n":1}}`:                {"items: want array, got an object"},
		`{"kind":"Report","items":[{"n":1,"other":"x"}]}`:  {"items[0].other: unknown key"},
	} {
		got, err := Validate([]byte(schema), []byte(doc))
		require.NoError(t, err, doc)
		assert.Equal(t, want, got, doc)
	}
}

func TestValidateRefusesWhatItCannotCheck(t *testing.T) {
	got, err := Validate([]byte(`{"type":"object","unevaluatedProperties":false}`), []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, []string{`(document): the checker does not know schema keyword "unevaluatedProperties"`}, got)

	got, err = Validate([]byte(`{"$ref":"#/$defs/Missing"}`), []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, []string{`(document): unresolvable $ref "#/$defs/Missing"`}, got)

	_, err = Validate([]byte(`{}`), []byte(`{"a":1} {"b":2}`))
	require.Error(t, err, "two documents are not one")
	_, err = Validate([]byte(`{`), []byte(`{}`))
	require.Error(t, err)
}
