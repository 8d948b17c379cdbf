package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func tcp(p string) v1alpha1.Port { return v1alpha1.Port{Port: v1alpha1.PortValue(p), Protocol: "tcp"} }
func udp(p string) v1alpha1.Port { return v1alpha1.Port{Port: v1alpha1.PortValue(p), Protocol: "udp"} }

// sortPorts removes duplicates and orders ports by number, then protocol.
func sortPorts(in []v1alpha1.Port) []v1alpha1.Port {
	seen := map[v1alpha1.Port]bool{}
	var out []v1alpha1.Port
	for _, p := range in {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, _, _ := out[i].Port.Range()
		b, _, _ := out[j].Port.Range()
		if a != b {
			return a < b
		}
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
}

// truthy reads a boolean engine flag written as a bool or a string.
func truthy(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		b, _ := strconv.ParseBool(t)
		return b
	}
	return false
}

// firstString is a flag's value as one string: the first of a list.
func firstString(v any) string {
	if l := stringList(v); len(l) > 0 {
		return l[0]
	}
	return ""
}

// rke2CNI is the primary CNI a cni value selects: canal by default, and
// the value after multus when multus comes first.
func rke2CNI(v any) (string, error) {
	cnis := splitList(v)
	if len(cnis) > 0 && cnis[0] == "multus" {
		cnis = cnis[1:]
	}
	switch {
	case len(cnis) == 0 && len(splitList(v)) == 0:
		return "canal", nil
	case len(cnis) != 1:
		return "", fmt.Errorf("cni %q: one CNI, optionally after multus", strings.Join(splitList(v), ","))
	}
	return cnis[0], nil
}
