package apiserver

import (
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// requirement is one term of a label or field selector.
type requirement struct {
	key    string
	op     string // "=", "!=", "in", "notin", "exists", "!"
	values []string
}

// selector is a parsed labelSelector or fieldSelector: every term must hold.
type selector []requirement

// parseLabelSelector reads the labelSelector grammar kubectl sends:
// k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b).
func parseLabelSelector(s string) (selector, error) {
	var sel selector
	for _, term := range splitTerms(s) {
		term = strings.TrimSpace(term)
		switch {
		case term == "":
		case strings.HasPrefix(term, "!"):
			sel = append(sel, requirement{key: strings.TrimSpace(term[1:]), op: "!"})
		case strings.Contains(term, " notin "), strings.Contains(term, " in "):
			op := "in"
			if strings.Contains(term, " notin ") {
				op = "notin"
			}
			k, v, _ := strings.Cut(term, " "+op+" ")
			v = strings.TrimSpace(v)
			if !strings.HasPrefix(v, "(") || !strings.HasSuffix(v, ")") {
				return nil, fmt.Errorf("unable to parse requirement: %q", term)
			}
			var vals []string
			for _, x := range strings.Split(v[1:len(v)-1], ",") {
				vals = append(vals, strings.TrimSpace(x))
			}
			sel = append(sel, requirement{key: strings.TrimSpace(k), op: op, values: vals})
		default:
			r, ok := equality(term)
			if !ok {
				r = requirement{key: term, op: "exists"}
			}
			sel = append(sel, r)
		}
	}
	return sel, nil
}

// parseFieldSelector reads k=v, k==v and k!=v terms.
func parseFieldSelector(s string) (selector, error) {
	var sel selector
	for _, term := range strings.Split(s, ",") {
		if strings.TrimSpace(term) == "" {
			continue
		}
		r, ok := equality(term)
		if !ok {
			return nil, fmt.Errorf("invalid selector: %q; can't understand %q", s, term)
		}
		sel = append(sel, r)
	}
	return sel, nil
}

func equality(term string) (requirement, bool) {
	for _, op := range []string{"!=", "==", "="} {
		if k, v, ok := strings.Cut(term, op); ok {
			if op == "==" {
				op = "="
			}
			return requirement{key: strings.TrimSpace(k), op: op, values: []string{strings.TrimSpace(v)}}, true
		}
	}
	return requirement{}, false
}

// splitTerms splits on commas outside parentheses.
func splitTerms(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// matches reports whether get (a label or field lookup) satisfies sel.
func (sel selector) matches(get func(string) (string, bool)) bool {
	for _, r := range sel {
		v, ok := get(r.key)
		switch r.op {
		case "=":
			if v != r.values[0] {
				return false
			}
		case "!=":
			if v == r.values[0] {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!":
			if ok {
				return false
			}
		case "in", "notin":
			found := false
			for _, x := range r.values {
				if ok && v == x {
					found = true
				}
			}
			if found != (r.op == "in") {
				return false
			}
		}
	}
	return true
}

// fieldValue is the value of a field selector key on obj. The apiserver
// supports a fixed set per resource; these are the ones kubectl and the
// engine use (metadata.name, metadata.namespace, spec.nodeName,
// status.phase, spec.unschedulable).
func fieldValue(obj kube.Object, key string) (string, bool) {
	switch key {
	case "metadata.name", "metadata.namespace", "spec.nodeName", "status.phase":
		return kube.Str(obj, key), true
	case "spec.unschedulable":
		b, _ := kube.Get(obj, key).(bool)
		return fmt.Sprint(b), true
	}
	return "", false
}

// filter is a request's label and field selectors.
type filter struct{ labels, fields selector }

func (f filter) match(obj kube.Object) bool {
	lbls := kube.StrMap(obj, "metadata.labels")
	if !f.labels.matches(func(k string) (string, bool) { v, ok := lbls[k]; return v, ok }) {
		return false
	}
	return f.fields.matches(func(k string) (string, bool) { return fieldValue(obj, k) })
}
