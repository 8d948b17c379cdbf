package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// TestEveryCommandHasLongHelpAndExamples walks the tree as the docs are
// made from it: every command of cargoship's own has a Long description
// and an Example; cobra's completion and help commands are cobra's.
func TestEveryCommandHasLongHelpAndExamples(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard, func(string) (string, bool) { return "", false })
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	assert.Empty(t, missingLongOrExample(root), "give these a Long and an Example; then run `go run ./hack/gendocs`")
}

// TestMissingLongOrExampleFindsGaps proves the walk above can fail.
func TestMissingLongOrExampleFindsGaps(t *testing.T) {
	root := &cobra.Command{Use: "tool", Long: "a tool", Example: "  tool go"}
	root.AddCommand(
		&cobra.Command{Use: "bare", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "told", Long: "told", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}},
	)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	assert.Equal(t, []string{
		"tool bare: no Long help", "tool bare: no Example", "tool told: no Example",
	}, missingLongOrExample(root))
}

// missingLongOrExample names every visible command, cobra's own aside,
// without a Long or an Example.
func missingLongOrExample(root *cobra.Command) []string {
	var out []string
	walkCommands(root, func(c *cobra.Command) {
		if isCobras(c) {
			return
		}
		if strings.TrimSpace(c.Long) == "" {
			out = append(out, c.CommandPath()+": no Long help")
		}
		if strings.TrimSpace(c.Example) == "" {
			out = append(out, c.CommandPath()+": no Example")
		}
	})
	return out
}

// isCobras reports whether c is cobra's help or completion command, or
// one of completion's shells.
func isCobras(c *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c.HasParent() && !c.Parent().HasParent() && (c.Name() == "completion" || c.Name() == "help") {
			return true
		}
	}
	return false
}
