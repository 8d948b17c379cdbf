package v1alpha1

import "testing"

func TestDecodeStrict(t *testing.T) {
	type doc struct {
		A int      `json:"a"`
		B []string `json:"b"`
	}
	cases := map[string]string{
		"a: 1\nb: [x, y]\n":            "",
		"a: 1\nc: 2\n":                 "s.yaml:2:1: c: unknown field \"c\"",
		"a: &n 1\nb: [*n]\n":           "s.yaml:2:5: holds an alias (*name); this document is written without them",
		"a: 1\n---\na: 2\n":            "s.yaml:3:1: holds 2 YAML documents; one file is one document",
		"a: x\n":                       "s.yaml:1:4: a: want a whole number, got \"x\"",
		"- 1\n":                        "s.yaml:1:1: the document must be a mapping",
		"a: 1\nb: " + nest(201) + "\n": "s.yaml:2:",
	}
	for in, want := range cases {
		var v doc
		s, err := DecodeStrict("s.yaml", []byte(in), &v)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want != "" && (err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want):
			t.Errorf("%q: got %v, want %s...", in, err, want)
		case want == "":
			s.Errorf("b[1]", "is wrong")
			if err := s.Err(); err == nil || err.Error() != "s.yaml:2:8: b[1]: is wrong" {
				t.Errorf("Errorf at b[1]: got %v", err)
			}
		}
	}
}

func nest(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}
