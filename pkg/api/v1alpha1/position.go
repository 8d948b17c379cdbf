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

// splitPath turns spec.hosts[1].ssh.address, or a quoted key as in
// spec.config.os.sysctl["net.ipv4.ip_forward"], into its segments.
func splitPath(p string) []pathSegment {
	var segs []pathSegment
	for i := 0; i < len(p); {
		switch {
		case p[i] == '.':
			i++
		case strings.HasPrefix(p[i:], `["`):
			q, err := strconv.QuotedPrefix(p[i+1:])
			if err != nil {
				return segs
			}
			k, _ := strconv.Unquote(q)
			segs = append(segs, pathSegment{key: k})
			i += 1 + len(q) + 1
		case p[i] == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return segs
			}
			n, err := strconv.Atoi(p[i+1 : i+end])
			if err != nil {
				return segs
			}
			segs = append(segs, pathSegment{index: n, isIdx: true})
			i += end + 1
		default:
			end := strings.IndexAny(p[i:], ".[")
			if end < 0 {
				end = len(p) - i
			}
			segs = append(segs, pathSegment{key: p[i : i+end]})
			i += end
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

// pathAt returns the field path of the key or value written at tok, so an
// error the YAML decoder reports by token still names its field. It returns
// "" when no node of the document starts there.
func pathAt(root ast.Node, tok *token.Token) string {
	if root == nil || tok == nil {
		return ""
	}
	path, _ := findPath(root, tok, "")
	return path
}

func findPath(n ast.Node, tok *token.Token, path string) (string, bool) {
	if n == nil {
		return "", false
	}
	inner := unwrap(n)
	switch v := inner.(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			if p, ok := findInPair(mv, tok, path); ok {
				return p, true
			}
		}
	case *ast.MappingValueNode:
		if p, ok := findInPair(v, tok, path); ok {
			return p, true
		}
	case *ast.SequenceNode:
		for i, e := range v.Values {
			if p, ok := findPath(e, tok, path+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
			}
		}
	}
	if samePosition(n.GetToken(), tok) || samePosition(inner.GetToken(), tok) {
		return path, true
	}
	return "", false
}

func findInPair(mv *ast.MappingValueNode, tok *token.Token, path string) (string, bool) {
	if mv.Key == nil {
		return "", false
	}
	p := joinPath(path, keyString(mv.Key))
	if samePosition(mv.Key.GetToken(), tok) {
		return p, true
	}
	return findPath(mv.Value, tok, p)
}

func samePosition(a, b *token.Token) bool {
	if a == nil || b == nil || a.Position == nil || b.Position == nil {
		return false
	}
	return a == b || a.Position.Line == b.Position.Line && a.Position.Column == b.Position.Column
}
