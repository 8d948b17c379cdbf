package cli

//go:generate go run ../../hack/gendocs

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const commandDocs = "../../docs/commands"

// TestCommandDocsCurrent regenerates the command reference with the real
// generator and fails when docs/commands differs from it.
func TestCommandDocsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hack/gendocs")
	}
	fresh := t.TempDir()
	cmd := exec.Command(goTool(t), "run", "../../hack/gendocs", "-dir", fresh)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Run(), "go run ./hack/gendocs: %s", stderr.String())

	diffs := compareDocDirs(t, commandDocs, fresh)
	if len(diffs) > 0 {
		t.Fatalf("docs/commands is stale; run `go run ./hack/gendocs` and commit the result:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// TestCompareDocDirsFindsStalePages proves the comparison above can fail:
// a changed, a missing and an extra page are each reported.
func TestCompareDocDirsFindsStalePages(t *testing.T) {
	want, got := t.TempDir(), t.TempDir()
	write := func(dir, name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write(want, "same.md", "x\n")
	write(got, "same.md", "x\n")
	assert.Empty(t, compareDocDirs(t, want, got))

	write(want, "changed.md", "old\n")
	write(got, "changed.md", "new\n")
	write(want, "gone.md", "a command that no longer exists\n")
	write(got, "new.md", "a command with no page yet\n")
	assert.Equal(t, []string{
		"changed.md: differs from the generated page",
		"gone.md: no such command any more (the generator writes no such page)",
		"new.md: missing (the generator writes it)",
	}, compareDocDirs(t, want, got))
}

// compareDocDirs lists how the committed pages (have) differ from freshly
// generated ones (fresh), by file name.
func compareDocDirs(t *testing.T, have, fresh string) []string {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			out[filepath.Base(p)] = b
		}
		return out
	}
	h, f := read(have), read(fresh)
	var diffs []string
	for name, body := range f {
		old, ok := h[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": missing (the generator writes it)")
		case !bytes.Equal(old, body):
			diffs = append(diffs, name+": differs from the generated page")
		}
	}
	for name := range h {
		if _, ok := f[name]; !ok {
			diffs = append(diffs, name+": no such command any more (the generator writes no such page)")
		}
	}
	sort.Strings(diffs)
	return diffs
}

// goTool is the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command on PATH or in GOROOT to run hack/gendocs with: %v", err)
	}
	return p
}

// TestEveryCommandAndFlagHasHelp walks the tree the docs are made from.
func TestEveryCommandAndFlagHasHelp(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard, func(string) (string, bool) { return "", false })
	root.InitDefaultCompletionCmd()
	missing := missingHelp(root)
	assert.Empty(t, missing, "give these a Short (commands) or a usage string (flags); then run `go run ./hack/gendocs`")

	// the pages list what the tree holds, so a command must be in both
	var paths []string
	walkCommands(root, func(c *cobra.Command) { paths = append(paths, c.CommandPath()) })
	for _, want := range []string{"cargoship apply", "cargoship prepare", "cargoship create", "cargoship inspect", "cargoship validate", "cargoship keygen", "cargoship version"} {
		assert.Contains(t, paths, want)
	}
	for _, p := range paths {
		assert.FileExists(t, filepath.Join(commandDocs, strings.ReplaceAll(p, " ", "_")+".md"), "run `go run ./hack/gendocs`")
	}
}

// TestMissingHelpFindsGaps proves the check above can fail.
func TestMissingHelpFindsGaps(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	root.PersistentFlags().Bool("quiet", false, "")
	bare := &cobra.Command{Use: "bare", Run: func(*cobra.Command, []string) {}}
	bare.Flags().String("name", "", "")
	bare.Flags().String("documented", "", "has help")
	bare.Flags().String("old", "", "")
	require.NoError(t, bare.Flags().MarkHidden("old"))
	hidden := &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(bare, hidden)
	assert.Equal(t, []string{
		"tool --quiet: flag has no help text",
		"tool bare --name: flag has no help text",
		"tool bare: command has no short help",
	}, missingHelp(root))
}

// missingHelp names every visible command without a Short and every
// visible flag without a usage string.
func missingHelp(root *cobra.Command) []string {
	var out []string
	walkCommands(root, func(c *cobra.Command) {
		if strings.TrimSpace(c.Short) == "" {
			out = append(out, c.CommandPath()+": command has no short help")
		}
		check := func(f *pflag.Flag) {
			if !f.Hidden && strings.TrimSpace(f.Usage) == "" {
				out = append(out, c.CommandPath()+" --"+f.Name+": flag has no help text")
			}
		}
		c.LocalNonPersistentFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	})
	sort.Strings(out)
	return out
}

// walkCommands visits c and every visible command under it.
func walkCommands(c *cobra.Command, visit func(*cobra.Command)) {
	if c.Hidden || c.Deprecated != "" {
		return
	}
	visit(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, visit)
	}
}
