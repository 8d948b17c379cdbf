package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigIsDashC: -c names the cluster document on every command that
// reads one, as k0sctl's does, and --concurrency has no short flag left.
func TestConfigIsDashC(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard, func(string) (string, bool) { return "", false })
	for _, name := range []string{"apply", "prepare", "reset", "kube-config"} {
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err)
		cfg := cmd.Flags().Lookup("config")
		require.NotNil(t, cfg, name)
		assert.Equal(t, "c", cfg.Shorthand, "%s -c", name)
		if conc := cmd.Flags().Lookup("concurrency"); conc != nil {
			assert.Empty(t, conc.Shorthand, "%s --concurrency", name)
		}
	}
}

// TestDashCWithACount: a script written for the earlier -c N gets told
// what -c means now, before any document is read; a file that happens to
// be named by a number is still a cluster document.
func TestDashCWithACount(t *testing.T) {
	for _, args := range [][]string{
		{"apply", "pkg.tar.zst", "-c", "10", "--dry-run"},
		{"reset", "-c", "10", "--dry-run"},
		{"kube-config", "-c", "10", "--distro", "k3s"},
	} {
		_, _, err := runCLI(t, nil, args...)
		require.ErrorContains(t, err, "--config 10: no such file; -c names the cluster inventory (it was --concurrency's short flag): for 10 hosts at once pass --concurrency 10", "%v", args)
	}

	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "10"), []byte("not: a cluster\n"), 0o644))
	_, _, err := runCLI(t, nil, "reset", "-c", "10", "--distro", "k3s", "--dry-run")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "--concurrency's short flag", "a file named 10 is read as the inventory")
}
