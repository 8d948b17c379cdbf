package v1alpha1

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// positioner maps a field path to the line and column it was written at, so
// a validation message points at the document, not at a Go struct.
type positioner struct {
	root ast.Node
}

// pathSegment is one step of a field path: a key or an index.
type pathSegment struct {
	key   string
	index int
	isIdx bool
}

// splitPath turns spec.hosts[1].ssh.address into its segments.
func splitPath(p string) []pathSegment {
	var segs []pathSegment
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			open := strings.IndexByte(part, '[')
			if open < 0 {
				segs = append(segs, pathSegment{key: part})
				break
			}
			if open > 0 {
				segs = append(segs, pathSegment{key: part[:open]})
			}
			end := strings.IndexByte(part[open:], ']')
			if end < 0 {
				break
			}
			i, _ := strconv.Atoi(part[open+1 : open+end])
			segs = append(segs, pathSegment{index: i, isIdx: true})
			part = part[open+end+1:]
		}
	}
	return segs
}

// position finds the deepest node the path reaches. For a missing field it
// points at the mapping that should have held it. onKey points at the key
// rather than the value, which reads better for unknown fields.
func (p positioner) position(path string, onKey bool) (int, int) {
	node := p.root
	var keyTok *token.Token
	for _, seg := range splitPath(path) {
		next, kt := child(node, seg)
		if next == nil {
			break
		}
		node, keyTok = next, kt
	}
	tok := tokenOf(node)
	if onKey && keyTok != nil {
		tok = keyTok
	}
	if tok == nil {
		return 0, 0
	}
	return tok.Position.Line, tok.Position.Column
}

func tokenOf(n ast.Node) *token.Token {
	if n == nil {
		return nil
	}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 && !m.IsFlowStyle {
		return m.Values[0].Key.GetToken()
	}
	return n.GetToken()
}

func child(n ast.Node, seg pathSegment) (ast.Node, *token.Token) {
	n = unwrap(n)
	switch v := n.(type) {
	case *ast.MappingNode:
		if seg.isIdx {
			return nil, nil
		}
		for _, mv := range v.Values {
			if keyString(mv.Key) == seg.key {
				return mv.Value, mv.Key.GetToken()
			}
		}
	case *ast.MappingValueNode:
		if !seg.isIdx && keyString(v.Key) == seg.key {
			return v.Value, v.Key.GetToken()
		}
	case *ast.SequenceNode:
		if seg.isIdx && seg.index >= 0 && seg.index < len(v.Values) {
			return v.Values[seg.index], nil
		}
	}
	return nil, nil
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.DocumentNode:
			n = v.Body
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

func keyString(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return strings.Trim(k.String(), `"'`)
}
