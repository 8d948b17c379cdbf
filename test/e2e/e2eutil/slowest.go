package e2eutil

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"
)

// Steps records how long each tracked test took, so a suite can end by
// naming its slowest steps: where a walk's minutes went, without reading
// the whole log (issue 13).
type Steps struct {
	mu    sync.Mutex
	times []stepTime
}

type stepTime struct {
	name string
	took time.Duration
}

// Track records t's duration, from now to the end of t and its subtests.
func (s *Steps) Track(t testing.TB) {
	start := time.Now()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.times = append(s.times, stepTime{name: t.Name(), took: time.Since(start)})
	})
}

// Leaves are the tracked tests with no tracked subtest, slowest first: a
// parent's time is the sum of its children's, so listing both would only
// repeat them.
func (s *Steps) Leaves() []stepTime {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []stepTime
	for _, st := range s.times {
		parent := slices.ContainsFunc(s.times, func(o stepTime) bool {
			return len(o.name) > len(st.name) && o.name[:len(st.name)+1] == st.name+"/"
		})
		if !parent {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b stepTime) int { return int(b.took - a.took) })
	return out
}

// Report writes the n slowest leaves, nothing when none was tracked.
func (s *Steps) Report(w io.Writer, n int) {
	leaves := s.Leaves()
	if len(leaves) == 0 {
		return
	}
	if len(leaves) > n {
		leaves = leaves[:n]
	}
	_, _ = fmt.Fprintf(w, "slowest steps (%d of %d):\n", len(leaves), len(s.Leaves()))
	for _, st := range leaves {
		_, _ = fmt.Fprintf(w, "  %8s  %s\n", st.took.Round(100*time.Millisecond), st.name)
	}
}
