package firewall

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitSections(t *testing.T) {
	out := "noise\n@@ipsets\na b\nc\n@@rich public\n rule family=\"ipv4\" accept \n\n@@sources trusted\n"
	secs := splitSections(out)
	assert.Len(t, secs, 3)
	assert.Equal(t, []string{"a", "b", "c"}, secs[0].words())
	assert.Equal(t, "rich", secs[1].name)
	assert.Equal(t, "public", secs[1].arg)
	assert.Equal(t, []string{`rule family="ipv4" accept`}, secs[1].nonEmpty())
	assert.Equal(t, "trusted", secs[2].arg)
	assert.Empty(t, secs[2].words())
}
