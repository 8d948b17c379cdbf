package e2eutil

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Only leaves are listed, slowest first, and at most n of them.
func TestStepsReportsSlowestLeaves(t *testing.T) {
	var s Steps
	t.Run("walk", func(t *testing.T) {
		s.Track(t)
		t.Run("quick", func(t *testing.T) { s.Track(t) })
		t.Run("slow", func(t *testing.T) { s.Track(t); time.Sleep(30 * time.Millisecond) })
		t.Run("middling", func(t *testing.T) { s.Track(t); time.Sleep(10 * time.Millisecond) })
	})
	leaves := s.Leaves()
	require.Len(t, leaves, 3, "the parent is not a leaf")
	assert.Equal(t, t.Name()+"/walk/slow", leaves[0].name)
	assert.Equal(t, t.Name()+"/walk/middling", leaves[1].name)
	var b strings.Builder
	s.Report(&b, 2)
	out := b.String()
	assert.Contains(t, out, "slowest steps (2 of 3)")
	assert.Contains(t, out, "walk/slow")
	assert.NotContains(t, out, "walk/quick")
	assert.Less(t, strings.Index(out, "walk/slow"), strings.Index(out, "walk/middling"))
}
