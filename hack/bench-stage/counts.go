package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// parseCounts reads a comma list of host counts ("2,10,20"), each at
// least 2 (a controller and a worker), into ascending order without
// repeats: one table row per count, smallest fleet first.
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a host count", f)
		}
		if n < 2 {
			return nil, fmt.Errorf("host count %d: a fleet needs at least 2 hosts (a controller and a worker)", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q lists no host count", s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
