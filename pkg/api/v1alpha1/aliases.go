package v1alpha1

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// maxExpandedNodes bounds what aliases may expand a document to: a real
// inventory is a few thousand nodes, and a chain of aliases of aliases
// ("billion laughs") must fail here, not in the decoder's memory.
const maxExpandedNodes = 1 << 20

// checkAliases reports every alias (*name) the decoder would refuse
// without saying where: one with no anchor (&name) before it, one inside
// the node it names (a cycle), and aliases that expand the document beyond
// maxExpandedNodes.
func checkAliases(d *document) bool {
	anchors := map[string][]*ast.AnchorNode{}
	for _, n := range ast.Filter(ast.AnchorType, d.body) {
		if a := n.(*ast.AnchorNode); a.Name != nil && hasPos(a.Start) {
			anchors[a.Name.String()] = append(anchors[a.Name.String()], a)
		}
	}
	x := &expander{anchors: anchors, memo: map[*ast.AnchorNode]int{}, visiting: map[*ast.AnchorNode]bool{}}
	ok := true
	for _, n := range ast.Filter(ast.AliasType, d.body) {
		a := n.(*ast.AliasNode)
		if a.Value == nil || !hasPos(a.Start) {
			continue
		}
		name := a.Value.String()
		msg := ""
		switch target := x.resolve(a); {
		case target == nil:
			msg = fmt.Sprintf("alias *%s names no anchor &%s defined before it", name, name)
		case contains(target, a):
			msg = fmt.Sprintf("alias *%s is inside the node &%s names: it would repeat forever", name, name)
		}
		if msg != "" {
			ok = false
			d.findings = append(d.findings, Finding{Severity: SeverityError, File: d.file,
				Line: a.Start.Position.Line, Column: a.Start.Position.Column, Path: pathAt(d.body, a.Start), Message: msg})
		}
	}
	if ok {
		if size := x.size(d.body); size > maxExpandedNodes {
			line, col := 0, 0
			if t := tokenOf(unwrap(d.body)); hasPos(t) {
				line, col = t.Position.Line, t.Position.Column
			}
			d.findings = append(d.findings, Finding{Severity: SeverityError, File: d.file, Line: line, Column: col,
				Message: fmt.Sprintf("aliases expand the document to more than %d values", maxExpandedNodes)})
			ok = false
		}
	}
	return ok
}

func hasPos(t *token.Token) bool { return t != nil && t.Position != nil }

// expander counts the values a node stands for once aliases are expanded.
type expander struct {
	anchors  map[string][]*ast.AnchorNode
	memo     map[*ast.AnchorNode]int
	visiting map[*ast.AnchorNode]bool
}

// resolve finds the anchor an alias names: the last one before it.
func (x *expander) resolve(a *ast.AliasNode) *ast.AnchorNode {
	var best *ast.AnchorNode
	for _, an := range x.anchors[a.Value.String()] {
		if an.Start.Position.Offset < a.Start.Position.Offset && (best == nil || an.Start.Position.Offset > best.Start.Position.Offset) {
			best = an
		}
	}
	return best
}

func (x *expander) size(n ast.Node) int {
	total := 1
	switch v := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		return x.size(v.Body)
	case *ast.TagNode:
		return x.size(v.Value)
	case *ast.AnchorNode:
		if x.visiting[v] {
			return maxExpandedNodes + 1
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
			total = capAdd(total, x.size(mv))
		}
	case *ast.MappingValueNode:
		total = capAdd(total, x.size(v.Key))
		total = capAdd(total, x.size(v.Value))
	case *ast.SequenceNode:
		for _, e := range v.Values {
			total = capAdd(total, x.size(e))
		}
	}
	return total
}

func capAdd(a, b int) int { return min(a+b, maxExpandedNodes+1) }

// contains reports whether the alias lies inside the anchored node.
func contains(anchor *ast.AnchorNode, alias *ast.AliasNode) bool {
	for _, n := range ast.Filter(ast.AliasType, anchor.Value) {
		if n == ast.Node(alias) {
			return true
		}
	}
	return false
}
