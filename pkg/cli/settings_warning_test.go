package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The deprecated CARGOSHIP_CONFIG is read with a warning by every command,
// not only by create and inspect.
func TestEveryCommandWarnsOfTheDeprecatedSettingsVariable(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "cargoship-config.yaml")
	require.NoError(t, os.WriteFile(settings, []byte("log_level: info\n"), 0o644))
	cluster := filepath.Join(dir, "cluster.yaml")
	require.NoError(t, os.WriteFile(cluster, []byte("kind: Cluster\nmetadata: {name: c}\nspec:\n  config: {loadbalancer: 10.0.0.1}\n  hosts:\n  - ssh: {address: 10.0.0.1}\n    role: single\n"), 0o644))
	var out, errOut strings.Builder
	env := map[string]string{"CARGOSHIP_CONFIG": settings, "HOME": dir}
	root := NewRootCommand(&out, &errOut, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	root.SetArgs([]string{"validate", cluster})
	require.NoError(t, root.Execute(), errOut.String())
	assert.Contains(t, errOut.String(), "CARGOSHIP_CONFIG is deprecated")
}
