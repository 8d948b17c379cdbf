package v1alpha1

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// What the HA checks read in a distro's chart values (engine.manifest);
// docs/validate.md, "HA checks", lists the same keys.

// poolKeys hold address pools at any depth: MetalLB's addresses, Cilium
// LB-IPAM's blocks[].cidr (and start/stop), a Service's loadBalancerIP(s),
// kube-vip-cloud-provider's cidr-*/range-* and the like.
var poolKeys = []string{"addresses", "cidr", "cidrs", "range", "ranges", "loadBalancerIP", "loadBalancerIPs"}

func poolKey(key string) bool {
	return slices.Contains(poolKeys, key) || strings.HasPrefix(key, "cidr-") || strings.HasPrefix(key, "range-")
}

// cniEndpointKey: Cilium's k8sServiceHost and the Tigera (Calico)
// operator's kubernetesServiceEndpoint.host name the API server the CNI
// dials, bypassing the kubernetes Service.
func cniEndpointKey(path, key string) bool {
	return key == "k8sServiceHost" || key == "host" && strings.HasSuffix(path, ".kubernetesServiceEndpoint.host")
}

// chartTemplateData is what chart values may name, as the renderer fills
// it in (docs/distro.md, "Chart values templates"). APIPort, every
// engine's 6443, is text here: it prints the same, and a template cannot
// range over it, which nested would loop 6443^n times inside validate.
func chartTemplateData(c *Cluster) map[string]any {
	vip := ""
	if c.Spec.Config.VIP != nil {
		vip = c.Spec.Config.VIP.IP()
	}
	return map[string]any{"VIP": vip, "APIAddress": c.Spec.Config.APIAddress(), "APIPort": "6443"}
}

// renderTemplate renders s as the renderer does; a template that fails is
// the renderer's to report, and is read as written.
func renderTemplate(s string, data map[string]any) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	t, err := template.New("values").Option("missingkey=error").Parse(s)
	if err != nil {
		return s
	}
	var b strings.Builder
	if t.Execute(&b, data) != nil {
		return s
	}
	return b.String()
}

// renderedValues are a chart's values as written for the cluster: text
// rendered whole, a mapping string by string.
func renderedValues(v any, data map[string]any) map[string]any {
	if s, ok := v.(string); ok {
		if m := chartValues(renderTemplate(s, data)); m != nil {
			return m
		}
		return chartValues(s)
	}
	m, _ := renderLeaves(chartValues(v), data).(map[string]any)
	return m
}

func renderLeaves(v any, data map[string]any) any {
	switch t := v.(type) {
	case string:
		return renderTemplate(t, data)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = renderLeaves(e, data)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = renderLeaves(e, data)
		}
		return out
	}
	return v
}

// chartValues are a chart's values as a mapping: YAML text is parsed
// (validation has refused text that is not a mapping).
func chartValues(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return t
	case string:
		var m map[string]any
		if yaml.Unmarshal([]byte(t), &m) == nil {
			return m
		}
	}
	return nil
}

// walkValues calls fn for every mapping entry (key set) and list item
// (key "") below v, in key order, with its path below v.
func walkValues(v any, path string, fn func(path, key string, v any)) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			p := path + childPath(k)
			fn(p, k, t[k])
			walkValues(t[k], p, fn)
		}
	case []any:
		for i, e := range t {
			p := path + "[" + strconv.Itoa(i) + "]"
			fn(p, "", e)
			walkValues(e, p, fn)
		}
	}
}

// addrRange is one pool entry: a CIDR, an "a-b" range or one address.
type addrRange struct {
	lo, hi netip.Addr
	text   string
}

func (r addrRange) contains(a netip.Addr) bool {
	return a.BitLen() == r.lo.BitLen() && a.Compare(r.lo) >= 0 && a.Compare(r.hi) <= 0
}

// poolItems reads the ranges of a pool value; what does not read as one
// (a port range, a name) is no pool and is skipped.
func poolItems(v any) []addrRange {
	var out []addrRange
	if m, ok := v.(map[string]any); ok {
		// Cilium LB-IPAM's {start, stop} block.
		start, _ := m["start"].(string)
		stop, _ := m["stop"].(string)
		if r, ok := parseRange(start + "-" + stop); ok && start != "" && stop != "" {
			return []addrRange{r}
		}
		return nil
	}
	for _, s := range splitItems(v) {
		if r, ok := parseRange(s); ok {
			out = append(out, r)
		}
	}
	return out
}

func parseRange(s string) (addrRange, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		p = p.Masked()
		return addrRange{p.Addr(), lastAddr(p), s}, true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return addrRange{a.Unmap(), a.Unmap(), s}, true
	}
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return addrRange{}, false
	}
	a, err1 := netip.ParseAddr(strings.TrimSpace(lo))
	b, err2 := netip.ParseAddr(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a.BitLen() != b.BitLen() || b.Less(a) {
		return addrRange{}, false
	}
	return addrRange{a.Unmap(), b.Unmap(), s}, true
}

// valuePosition is the line and column of a chart value at inner (a path
// below the chart's values) in the definition: inside a literal block of
// YAML text, the line the value is written on.
func valuePosition(d *document, base, inner string, raw any) (int, int) {
	if d.body == nil {
		return 0, 0
	}
	if _, isText := raw.(string); !isText {
		return d.pos.position(base+inner, false)
	}
	line, col := d.pos.position(base, false)
	lit, ok := unwrap(d.pos.node(base)).(*ast.LiteralNode)
	if !ok || lit.Start == nil || lit.Value == nil || lit.Value.Token == nil {
		return line, col
	}
	f, err := parser.ParseBytes([]byte(lit.Value.Value), 0)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return line, col
	}
	l, c := positioner{root: f.Docs[0].Body}.position(inner, false)
	if l == 0 {
		return line, col
	}
	// A block's text starts on the line after its | header.
	return lit.Start.Position.Line + l, blockIndent(lit.Value.Token.Origin) + c
}

// blockIndent is the indentation of a literal block's first line.
func blockIndent(origin string) int {
	for _, l := range strings.Split(origin, "\n") {
		if strings.TrimSpace(l) != "" {
			return len(l) - len(strings.TrimLeft(l, " "))
		}
	}
	return 0
}

// node is the node a path reaches, or nil.
func (p positioner) node(path string) ast.Node {
	n := p.root
	for _, seg := range splitPath(path) {
		if n, _ = child(n, seg); n == nil {
			return nil
		}
	}
	return n
}
