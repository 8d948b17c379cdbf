package v1alpha1

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// maxExpandedNodes and maxExpandedBytes bound what aliases may expand a
// document to: a real inventory is a few thousand values, and a chain of
// aliases of aliases ("billion laughs"), or one long string repeated by
// alias, must fail here, not in the decoder's memory or in whatever later
// writes the values out (create's manifest, a rendered engine config).
const (
	maxExpandedNodes = 1 << 20
	maxExpandedBytes = 4 * maxDocumentSize
)

// checkAliases reports every alias (*name) the decoder would refuse
// without saying where: one with no anchor (&name) before it, one inside
// the node it names (a cycle), and aliases that expand the document beyond
// maxExpandedNodes values or maxExpandedBytes of scalars. It walks the
// document once; the shape scan has bounded the aliases it can meet.
func checkAliases(d *document) bool {
	anchors := map[string][]*ast.AnchorNode{}
	for _, n := range ast.Filter(ast.AnchorType, d.body) {
		if a := n.(*ast.AnchorNode); a.Name != nil && hasPos(a.Start) {
			anchors[a.Name.String()] = append(anchors[a.Name.String()], a)
		}
	}
	for _, as := range anchors {
		slices.SortFunc(as, func(a, b *ast.AnchorNode) int { return a.Start.Position.Offset - b.Start.Position.Offset })
	}
	x := &expander{anchors: anchors, memo: map[*ast.AnchorNode]expansion{}, visiting: map[*ast.AnchorNode]bool{}}
	c := &aliasCheck{d: d, x: x, ok: true}
	c.walk(d.body, "", nil)
	if !c.ok {
		return false
	}
	size := x.size(d.body)
	if size.nodes <= maxExpandedNodes && size.bytes <= maxExpandedBytes {
		return true
	}
	line, col := 0, 0
	if t := tokenOf(unwrap(d.body)); hasPos(t) {
		line, col = t.Position.Line, t.Position.Column
	}
	d.findings = append(d.findings, Finding{Severity: SeverityError, File: d.file, Line: line, Column: col,
		Message: fmt.Sprintf("aliases expand the document to more than %d values or %d MiB of text", maxExpandedNodes, maxExpandedBytes>>20)})
	return false
}

func hasPos(t *token.Token) bool { return t != nil && t.Position != nil }

// aliasCheck is what the walk over a document's aliases shares.
type aliasCheck struct {
	d  *document
	x  *expander
	ok bool
}

// anchorScope is the chain of anchored nodes around the walk's position.
type anchorScope struct {
	anchor *ast.AnchorNode
	outer  *anchorScope
}

func (s *anchorScope) has(a *ast.AnchorNode) bool {
	for ; s != nil; s = s.outer {
		if s.anchor == a {
			return true
		}
	}
	return false
}

// walk visits every alias with its field path and the anchors it lies
// inside, so a cycle is found, and a finding placed, without searching the
// document again for each alias.
func (c *aliasCheck) walk(n ast.Node, path string, inside *anchorScope) {
	switch v := n.(type) {
	case *ast.DocumentNode:
		c.walk(v.Body, path, inside)
	case *ast.TagNode:
		c.walk(v.Value, path, inside)
	case *ast.AnchorNode:
		c.walk(v.Value, path, &anchorScope{anchor: v, outer: inside})
	case *ast.AliasNode:
		c.checkAlias(v, path, inside)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			c.walk(mv, path, inside)
		}
	case *ast.MappingValueNode:
		p := joinPath(path, keyString(v.Key))
		c.walk(v.Key, p, inside)
		c.walk(v.Value, p, inside)
	case *ast.MappingKeyNode:
		c.walk(v.Value, path, inside)
	case *ast.SequenceNode:
		for i, e := range v.Values {
			c.walk(e, path+"["+strconv.Itoa(i)+"]", inside)
		}
	}
}

func (c *aliasCheck) checkAlias(a *ast.AliasNode, path string, inside *anchorScope) {
	if a.Value == nil || !hasPos(a.Start) {
		return
	}
	name := a.Value.String()
	msg := ""
	switch target := c.x.resolve(a); {
	case target == nil:
		msg = fmt.Sprintf("alias *%s names no anchor &%s defined before it", name, name)
	case inside.has(target):
		msg = fmt.Sprintf("alias *%s is inside the node &%s names: it would repeat forever", name, name)
	}
	if msg != "" {
		c.ok = false
		c.d.findings = append(c.d.findings, Finding{Severity: SeverityError, File: c.d.file,
			Line: a.Start.Position.Line, Column: a.Start.Position.Column, Path: path, Message: msg})
	}
}

// expansion is what a node stands for once aliases are expanded.
type expansion struct{ nodes, bytes int }

func (e expansion) plus(o expansion) expansion {
	return expansion{min(e.nodes+o.nodes, maxExpandedNodes+1), min(e.bytes+o.bytes, maxExpandedBytes+1)}
}

var tooLarge = expansion{maxExpandedNodes + 1, maxExpandedBytes + 1}

// expander counts the values a node stands for once aliases are expanded.
type expander struct {
	anchors  map[string][]*ast.AnchorNode // by name, in document order
	memo     map[*ast.AnchorNode]expansion
	visiting map[*ast.AnchorNode]bool
}

// resolve finds the anchor an alias names: the last one before it.
func (x *expander) resolve(a *ast.AliasNode) *ast.AnchorNode {
	as := x.anchors[a.Value.String()]
	i, _ := slices.BinarySearchFunc(as, a.Start.Position.Offset, func(an *ast.AnchorNode, off int) int {
		return an.Start.Position.Offset - off
	})
	if i == 0 {
		return nil
	}
	return as[i-1]
}

func (x *expander) size(n ast.Node) expansion {
	total := expansion{nodes: 1}
	switch v := n.(type) {
	case nil:
		return expansion{}
	case *ast.DocumentNode:
		return x.size(v.Body)
	case *ast.TagNode:
		return x.size(v.Value)
	case *ast.AnchorNode:
		if x.visiting[v] {
			return tooLarge
		}
		if s, ok := x.memo[v]; ok {
			return s
		}
		x.visiting[v] = true
		s := x.size(v.Value)
		delete(x.visiting, v)
		x.memo[v] = s
		return s
	case *ast.AliasNode:
		if t := x.resolve(v); t != nil {
			return x.size(t)
		}
	case *ast.MappingNode:
		for _, mv := range v.Values {
			total = total.plus(x.size(mv))
		}
	case *ast.MappingValueNode:
		total = total.plus(x.size(v.Key))
		total = total.plus(x.size(v.Value))
	case *ast.MappingKeyNode:
		total = total.plus(x.size(v.Value))
	case *ast.SequenceNode:
		for _, e := range v.Values {
			total = total.plus(x.size(e))
		}
	case *ast.LiteralNode:
		if v.Value != nil {
			total.bytes = len(v.Value.Value)
		}
	default:
		if t := n.GetToken(); t != nil {
			total.bytes = len(t.Value)
		}
	}
	return total
}
