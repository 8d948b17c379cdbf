package provider

import (
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// describeChanges is a dry run's report as a plan shows it: per host, what
// each phase would do, in run order.
func describeChanges(rep *node.Report) string {
	if rep == nil {
		return ""
	}
	byHost := map[string][]string{}
	var order []string
	for _, c := range rep.Ordered() {
		if _, seen := byHost[c.Host]; !seen {
			order = append(order, c.Host)
		}
		what := c.What
		if c.Phase != "" {
			what = c.Phase + ": " + what
		}
		byHost[c.Host] = append(byHost[c.Host], what)
	}
	var b strings.Builder
	for _, h := range order {
		fmt.Fprintf(&b, "%s:\n", h)
		for _, w := range byHost[h] {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	for _, n := range rep.Notes() {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
