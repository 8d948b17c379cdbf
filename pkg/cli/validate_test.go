package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// validateCLI runs `cargoship validate ARGS` with no settings file and no
// CARGOSHIP_* variables, returning stdout, stderr and the error Main turns
// into the exit code.
func validateCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	settingsEnv(t, nil)
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut, func(string) (string, bool) { return "", false })
	root.SetArgs(append([]string{"validate"}, args...))
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// exitCode is what Main returns for err.
func exitCode(err error) int {
	var exit *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	}
	return 1
}

func TestValidateErrorsExitOneWithLocations(t *testing.T) {
	cluster := testdataPath(t, "invalid/cluster/09-port-out-of-range.yaml")
	distro := testdataPath(t, "invalid/distro/04-bad-shasum.yaml")
	out, _, err := validateCLI(t, cluster, "--distro", distro)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	var exit *ExitError
	require.ErrorAs(t, err, &exit, "a document error is an ExitError, so Main prints only the summary")
	assert.Equal(t, "5 error(s), 0 warning(s)", exit.Err.Error())

	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, []string{
		cluster + ":15:15: spec.hosts[0].ssh.port: 70000 is not a port (1-65535)",
		cluster + `:17:17: spec.hosts[0].ports[0].port: "0" is not a port (1-65535) or a range like 30000-32767`,
		distro + ":15:17: spec.config.files[0].shasum: must be a SHA-256 as 64 hex digits",
		distro + ":20:19: spec.config.os.files[0].shasum: must be a SHA-256 as 64 hex digits",
		distro + ":25:17: spec.config.manifests[0].shasum: must be a SHA-256 as 64 hex digits",
	}, lines)
	assert.NotContains(t, out, "valid:")
}

func TestValidateWarningsExitZero(t *testing.T) {
	cluster := testdataPath(t, "valid/cluster/warn-even-controllers.yaml")
	out, _, err := validateCLI(t, cluster, "--distro", testdataPath(t, "valid/distro/k3s-minimal.yaml"))
	require.NoError(t, err)
	assert.Equal(t, 0, exitCode(err))
	assert.Contains(t, out, cluster+":11:5: warning: spec.hosts: 4 controllers: an even number")
	assert.True(t, strings.HasSuffix(out, "valid: 1 warning(s)\n"), "got %q", out)
}

func TestValidateJSON(t *testing.T) {
	t.Run("errors", func(t *testing.T) {
		cluster := testdataPath(t, "invalid/cluster/29-registry-auth.yaml")
		out, _, err := validateCLI(t, cluster, "--json")
		assert.Equal(t, 1, exitCode(err))
		var got v1alpha1.Findings
		require.NoError(t, json.Unmarshal([]byte(out), &got), "stdout is one JSON array and nothing else: %s", out)
		require.Len(t, got, 5)
		assert.Len(t, got.Errors(), 4)
		w := got.Warnings()
		require.Len(t, w, 1)
		assert.Equal(t, v1alpha1.Finding{Severity: v1alpha1.SeverityWarning, File: cluster, Line: 17, Column: 17,
			Path: "spec.config.registries[0].auth.pass", Message: w[0].Message}, w[0])
		assert.Contains(t, w[0].Message, "prefer passEnv")
	})
	t.Run("clean", func(t *testing.T) {
		out, _, err := validateCLI(t, testdataPath(t, "valid/cluster/e2e-inventory-my-fleet.yaml"), "--json")
		require.NoError(t, err)
		assert.Equal(t, "[]\n", out)
	})
	t.Run("no line known", func(t *testing.T) {
		empty := testdataPath(t, "invalid/cluster/22-empty-file.yaml")
		out, _, err := validateCLI(t, empty, "--json")
		assert.Equal(t, 1, exitCode(err))
		var raw []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		require.Len(t, raw, 1)
		assert.NotContains(t, raw[0], "line", "line, column and path are left out when unknown")
		assert.NotContains(t, raw[0], "path")
		assert.Equal(t, "the document is empty", raw[0]["message"])
	})
}

func TestValidateDistroDirectory(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(testdataPath(t, "valid/distro/earlier-v1.35.3-k3s1.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, v1alpha1.DistroFileName), data, 0o644))
	out, _, err := validateCLI(t, "--distro", dir)
	require.NoError(t, err)
	assert.Equal(t, "valid: 0 warning(s)\n", out)
}

func TestValidateUnreadableAndMissingArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, _, err := validateCLI(t, missing)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), missing)

	_, _, err = validateCLI(t)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), "name a cluster document")
}

// TestValidateEarlierExamples: the earlier tool's inventory and every one of
// its distro definitions pass validate in one run.
func TestValidateEarlierExamples(t *testing.T) {
	args := []string{testdataPath(t, "valid/cluster/earlier-schema-cluster.yaml")}
	defs, err := filepath.Glob(filepath.Join(apiTestdata, "valid/distro/earlier-v*.yaml"))
	require.NoError(t, err)
	require.Len(t, defs, 11)
	for _, d := range defs {
		abs, err := filepath.Abs(d)
		require.NoError(t, err)
		args = append(args, "--distro", abs)
	}
	out, _, err := validateCLI(t, args...)
	require.NoError(t, err, out)
	assert.True(t, strings.HasSuffix(out, "valid: 1 warning(s)\n"), "the one warning is the earlier inventory's two controllers: %s", out)
}
