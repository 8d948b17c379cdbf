package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complete asks the tree what a shell would: cobra's hidden __complete
// command, which the generated completion scripts call. It returns the
// words offered and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out bytes.Buffer
	root := NewRootCommand(&out, &bytes.Buffer{}, func(string) (string, bool) { return "", false })
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	require.NoError(t, root.Execute())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// directive is the last line __complete prints for d.
func directive(d cobra.ShellCompDirective) string { return ":" + strconv.Itoa(int(d)) }

func TestCompletions(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []string{"cargoship-k3s.tar.zst", "notes.txt", "cluster.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "build"), 0o755))

	words, d := complete(t, "reset", "--distro", "")
	assert.Equal(t, []string{"k3s", "rke2", "upstream", "build/", "cargoship-k3s.tar.zst"}, words, "engines, packages and directories that may hold one")
	assert.Equal(t, directive(cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace), d)

	words, d = complete(t, "reset", "--distro", "r")
	assert.Equal(t, []string{"rke2"}, words)
	assert.Equal(t, directive(cobra.ShellCompDirectiveNoFileComp), d, "no directory matched: a space follows")

	words, d = complete(t, "kube-config", "--distro", "")
	assert.Equal(t, []string{"k3s", "rke2", "upstream"}, words, "kube-config takes an engine only")
	assert.Equal(t, directive(cobra.ShellCompDirectiveNoFileComp), d)

	for _, cmd := range []string{"apply", "prepare", "inspect"} {
		words, d = complete(t, cmd, "")
		assert.Equal(t, []string{"tar.zst"}, words, "%s PACKAGE: package files", cmd)
		assert.Equal(t, directive(cobra.ShellCompDirectiveFilterFileExt), d)

		words, d = complete(t, cmd, "cargoship-k3s.tar.zst", "")
		assert.Empty(t, words, "%s takes one package", cmd)
		assert.Equal(t, directive(cobra.ShellCompDirectiveNoFileComp), d)
	}

	words, d = complete(t, "validate", "")
	assert.Equal(t, []string{"yaml", "yml"}, words, "validate CLUSTER.yaml: YAML documents")
	assert.Equal(t, directive(cobra.ShellCompDirectiveFilterFileExt), d)
	words, d = complete(t, "validate", "cluster.yaml", "")
	assert.Empty(t, words, "validate takes one document")
	assert.Equal(t, directive(cobra.ShellCompDirectiveNoFileComp), d)
	for _, cmd := range [][]string{{"apply", "p.tar.zst"}, {"prepare", "p.tar.zst"}, {"reset"}, {"kube-config"}} {
		for _, flag := range []string{"--config", "-c"} {
			words, d = complete(t, append(cmd, flag, "")...)
			assert.Equal(t, []string{"yaml", "yml"}, words, "%v %s: YAML files", cmd, flag)
			assert.Equal(t, directive(cobra.ShellCompDirectiveFilterFileExt), d)
		}
	}
}
