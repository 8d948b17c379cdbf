package v1alpha1

import (
	"testing"

	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

func TestJoinSplitPath(t *testing.T) {
	cases := []struct {
		parent, key, joined string
	}{
		{"", "spec", "spec"},
		{"spec.hosts[1]", "ssh", "spec.hosts[1].ssh"},
		{"spec.config.os.sysctl", "net.ipv4.ip_forward", `spec.config.os.sysctl["net.ipv4.ip_forward"]`},
		{"spec.hosts[0].labels", "example.com/zone", `spec.hosts[0].labels["example.com/zone"]`},
		{"spec.hosts[0].environment", `A"];x`, `spec.hosts[0].environment["A\"];x"]`},
		{"spec.config.os.sysctl", "vm.max map count", `spec.config.os.sysctl["vm.max map count"]`},
	}
	for _, c := range cases {
		got := joinPath(c.parent, c.key)
		if got != c.joined {
			t.Errorf("joinPath(%q, %q) = %s, want %s", c.parent, c.key, got, c.joined)
			continue
		}
		segs := splitPath(got)
		if last := segs[len(segs)-1]; last.isIdx || last.key != c.key {
			t.Errorf("splitPath(%s) ends in %+v, want key %q", got, last, c.key)
		}
		if want := len(splitPath(c.parent)) + 1; len(segs) != want {
			t.Errorf("splitPath(%s) has %d segments, want %d", got, len(segs), want)
		}
	}
}

const positionDoc = `spec:
  config:
    os:
      sysctl:
        net.ipv4.ip_forward: "1"
        "vm.max map count": 2
  hosts:
    - role: controller
      ssh: {address: 10.0.0.1, port: 22}
    - role: worker
      labels:
        example.com/zone: a
`

func TestPosition(t *testing.T) {
	f, err := parser.ParseBytes([]byte(positionDoc), 0)
	if err != nil {
		t.Fatal(err)
	}
	p := positioner{root: f.Docs[0].Body}
	cases := []struct {
		path      string
		onKey     bool
		line, col int
	}{
		{`spec.config.os.sysctl["net.ipv4.ip_forward"]`, false, 5, 30},
		{`spec.config.os.sysctl["net.ipv4.ip_forward"]`, true, 5, 9},
		{`spec.config.os.sysctl["vm.max map count"]`, true, 6, 9},
		{"spec.hosts[0].ssh.port", false, 9, 38},
		{"spec.hosts[1].role", false, 10, 13},
		{`spec.hosts[1].labels["example.com/zone"]`, true, 12, 9},
		// Missing fields point at the mapping that should hold them.
		{"spec.hosts[1].ssh.address", false, 10, 7},
		{"spec.hosts[7]", false, 8, 5},
	}
	for _, c := range cases {
		line, col := p.position(c.path, c.onKey)
		if line != c.line || col != c.col {
			t.Errorf("position(%s, onKey=%v) = %d:%d, want %d:%d", c.path, c.onKey, line, col, c.line, c.col)
		}
	}
}

func TestPathAt(t *testing.T) {
	f, err := parser.ParseBytes([]byte(positionDoc), 0)
	if err != nil {
		t.Fatal(err)
	}
	root := f.Docs[0].Body
	at := func(line, col int) *token.Token {
		return &token.Token{Position: &token.Position{Line: line, Column: col}}
	}
	cases := []struct {
		line, col int
		want      string
	}{
		{5, 30, `spec.config.os.sysctl["net.ipv4.ip_forward"]`},
		{6, 9, `spec.config.os.sysctl["vm.max map count"]`},
		{9, 38, "spec.hosts[0].ssh.port"},
		{9, 12, "spec.hosts[0].ssh"},
		{12, 27, `spec.hosts[1].labels["example.com/zone"]`},
		{3, 99, ""},
	}
	for _, c := range cases {
		if got := pathAt(root, at(c.line, c.col)); got != c.want {
			t.Errorf("pathAt(%d:%d) = %q, want %q", c.line, c.col, got, c.want)
		}
	}
	if got := pathAt(root, nil); got != "" {
		t.Errorf("pathAt(nil) = %q", got)
	}
}
