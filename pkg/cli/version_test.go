package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/version"
)

// runVersion runs the tree with args, with a settings file that cannot be
// read: printing a version must not need settings.
func runVersion(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut, func(k string) (string, bool) {
		if k == EnvPrefix+"CONFIG" {
			return "/nonexistent/cargoship-config.yaml", true
		}
		return "", false
	})
	root.SetArgs(args)
	require.NoError(t, root.Execute(), "stderr: %s", errOut.String())
	return out.String()
}

// withLinked sets the link-time values for one test, as -ldflags -X would.
func withLinked(t *testing.T, v, commit, date string) {
	t.Helper()
	old := [3]string{version.Version, version.Commit, version.Date}
	version.Version, version.Commit, version.Date = v, commit, date
	t.Cleanup(func() { version.Version, version.Commit, version.Date = old[0], old[1], old[2] })
}

func TestVersionJSON(t *testing.T) {
	withLinked(t, "v1.2.3", "0123456789abcdef", "2026-12-02T03:00:00Z")
	var got version.Info
	require.NoError(t, json.Unmarshal([]byte(runVersion(t, "version", "--json")), &got))
	assert.Equal(t, "v1.2.3", got.Version)
	assert.Equal(t, "0123456789abcdef", got.Commit)
	assert.Equal(t, "2026-12-02T03:00:00Z", got.Date)
	assert.Equal(t, version.Get(), got)
}

func TestVersionText(t *testing.T) {
	withLinked(t, "v1.2.3", "abc", "")
	assert.Equal(t, version.Get().Text(), runVersion(t, "version"))
	assert.Contains(t, runVersion(t, "version"), "version:  v1.2.3\n")
}

// --version prints what `version` prints, verbatim even when the version
// holds template braces.
func TestRootVersionFlag(t *testing.T) {
	withLinked(t, "v1.0.0-{{.Name}}", "abc", "2026-12-02T03:00:00Z")
	got := runVersion(t, "--version")
	assert.Equal(t, version.Get().Text(), got)
	assert.Contains(t, got, "version:  v1.0.0-{{.Name}}\n")
	assert.Equal(t, got, runVersion(t, "-v"))
}
