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

// --strict turns the even controller count into an error (docs/validate.md).
func TestValidateStrictMakesWarningsErrors(t *testing.T) {
	cluster := testdataPath(t, "valid/cluster/warn-even-controllers.yaml")
	out, _, err := validateCLI(t, "--strict", cluster, "--distro", testdataPath(t, "valid/distro/k3s-minimal.yaml"))
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, out, cluster+":11:5: spec.hosts: 4 controllers: an even number")
	assert.NotContains(t, out, "warning:")
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

// TestValidateRefusesWhatApplyRefuses: each document here passed validate
// and was refused only by apply or create, late (rendering, connecting,
// fetching). validate now refuses each at its file, line and field
// (issue 11: 10).
func TestValidateRefusesWhatApplyRefuses(t *testing.T) {
	upstream := testdataPath(t, "valid/distro/earlier-upstream-with-version.yaml")
	for _, tc := range []struct {
		name, cluster, distro string
		at                    string // LINE:COL: PATH: of the document named first
		message               string
	}{
		{"a token in engine config", "invalid/cluster/40-token-in-profile-engine-config.yaml", "",
			"16:11: spec.config.profiles[0].engineConfig.token: ", "cargoship manages the cluster token"},
		{"a token in the distro's engine config", "", "invalid/distro/29-engine-config-owned-keys.yaml",
			"17:9: spec.config.engine.config.token: ", "cargoship manages the cluster token"},
		{"a chart name that is a path", "", "invalid/distro/30-chart-names-and-values.yaml",
			`17:9: spec.config.engine.manifest["../../x"]: `, "the name must be a chart's name"},
		{"an environment value with both quote kinds", "invalid/cluster/41-environment-both-quote-kinds.yaml", "",
			"21:15: spec.hosts[0].environment.BOTH: ", "both a single quote and one of"},
		{"a malformed hostKey", "invalid/cluster/42-malformed-host-key.yaml", "",
			"16:18: spec.hosts[0].ssh.hostKey: ", "is neither an authorized_keys line"},
		{"an openSSH option with a newline", "invalid/cluster/43-openssh-option-line-break.yaml", "",
			"22:17: spec.hosts[0].openSSH.options.User: ", "holds a line break"},
		{"an unsupported source scheme", "", "invalid/distro/31-unsupported-source-scheme.yaml",
			"16:17: spec.config.files[0].source: ", `scheme "ftp" is not supported`},
		{"registry credentials for containerd", "cross/01-upstream-profile-and-registry-auth.yaml", upstream,
			"19:11: spec.config.registries[0].auth: ", "with " + upstream + " (spec.type upstream): containerd reads no credentials"},
		{"a profile key kubeadm does not read", "cross/01-upstream-profile-and-registry-auth.yaml", upstream,
			"26:11: spec.config.profiles[0].engineConfig.node-taint: ", "use one of clusterConfiguration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			first := ""
			if tc.cluster != "" {
				first = testdataPath(t, tc.cluster)
				args = append(args, first)
			}
			if tc.distro != "" {
				d := tc.distro
				if !filepath.IsAbs(d) {
					d = testdataPath(t, d)
				}
				if first == "" {
					first = d
				}
				args = append(args, "--distro", d)
			}
			out, _, err := validateCLI(t, args...)
			assert.Equal(t, 1, exitCode(err), out)
			found := false
			for _, l := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(l, first+":"+tc.at); ok && strings.Contains(rest, tc.message) {
					found = true
				}
			}
			assert.True(t, found, "want a line %s:%s...%s in:\n%s", first, tc.at, tc.message, out)
		})
	}
}

// TestValidateWithDistroReportsTheInventoryOnce: the inventory's own
// findings are printed once however many definitions it is checked
// against; only the findings of each pair are added.
func TestValidateWithDistroReportsTheInventoryOnce(t *testing.T) {
	cluster := testdataPath(t, "valid/cluster/warn-even-controllers.yaml")
	k3s := testdataPath(t, "valid/distro/k3s-minimal.yaml")
	out, _, err := validateCLI(t, cluster, "--distro", k3s, "--distro", testdataPath(t, "valid/distro/earlier-v1.35.3-rke2r1.yaml"))
	require.NoError(t, err, out)
	assert.Equal(t, 1, strings.Count(out, "4 controllers"), out)
}

// TestApplyRefusesWhatValidateWithDistroRefuses: apply checks the inventory
// against its package's definition while loading, as validate --distro
// does, so the pair is refused before any host is tried (issue 11: 10).
func TestApplyRefusesWhatValidateWithDistroRefuses(t *testing.T) {
	out, _, err := runCLI(t, nil, "create", demoDef, "-o", t.TempDir(), "--architecture", "amd64")
	require.NoError(t, err)
	pkg := strings.TrimSpace(out)
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	require.NoError(t, os.WriteFile(inv, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: Cluster\nmetadata: {name: lab}\n"+
		"spec:\n  config:\n    loadbalancer: 127.0.0.1\n    profiles:\n      - name: controller\n        engineConfig:\n"+
		"          data-dir: /data/k3s\n  hosts:\n    - role: single\n      ssh: {address: 127.0.0.1, port: 1, user: nobody}\n"), 0o644))

	_, logged, err := runCLI(t, nil, "apply", pkg, "--config", inv, "--dry-run", "--timeout", "1s")
	require.Error(t, err)
	require.ErrorContains(t, err, inv+":10:11: spec.config.profiles[0].engineConfig.data-dir: with "+pkg+" (spec.type k3s)")
	assert.NotContains(t, logged, "Connect to hosts", "no host is touched")

	def, err := filepath.Abs(demoDef)
	require.NoError(t, err)
	out, _, err = validateCLI(t, inv, "--distro", def)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, out, inv+":10:11: spec.config.profiles[0].engineConfig.data-dir: with ")
}
