package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/cli/schemacheck"
)

// TestDetailedExitcodeOnAFleet is issue 17's done-when, on the real binary:
// `apply --dry-run -o json --detailed-exitcode` exits 2 on a fresh fleet,
// listing work for every host, and 0 once an apply converged it, listing
// none; every report it prints on stdout is one document the schema
// accepts, and the logs stay on stderr.
func TestDetailedExitcodeOnAFleet(t *testing.T) {
	w := setUp(t)
	root, err := repo.Root()
	require.NoError(t, err)
	schema, err := os.ReadFile(filepath.Join(root, "schema", node.ReportSchemaFile))
	require.NoError(t, err)
	inv := w.fleet.InventoryPath
	hosts := []string{"kc0", "kw0"}
	report := func(r result) node.ReportDocument {
		t.Helper()
		errs, err := schemacheck.Validate(schema, r.stdout)
		require.NoError(t, err, "stdout is one JSON document and nothing else:\n%s", r.stdout)
		require.Empty(t, errs, "the report does not match schema/%s:\n%s", node.ReportSchemaFile, r.stdout)
		var doc node.ReportDocument
		require.NoError(t, json.Unmarshal(r.stdout, &doc))
		var names []string
		for _, h := range doc.Hosts {
			names = append(names, h.Host)
		}
		assert.Subset(t, names, hosts, "every host of the inventory is listed")
		assert.Contains(t, string(r.stderr), "level=INFO", "the logs are on stderr")
		return doc
	}

	fresh := w.cargoship(t, "apply", w.pkg.Path, "-c", inv, "--dry-run", "-o", "json", "--detailed-exitcode")
	require.Equal(t, 2, fresh.code, "a dry run with work pending exits 2; stderr:\n%s", fresh.stderr)
	doc := report(fresh)
	assert.True(t, doc.DryRun)
	assert.True(t, doc.Changed)
	assert.True(t, doc.Complete, doc.Failure)
	assert.Zero(t, doc.Totals.BytesUploaded, "a dry run sends nothing")
	for _, h := range doc.Hosts {
		if h.Host == "kc0" || h.Host == "kw0" {
			assert.NotEmpty(t, h.Changes, "%s: a fresh host has work pending", h.Host)
		}
	}
	assert.Positive(t, doc.Totals.Changes)
	assert.NotEmpty(t, doc.Phases)
	t.Logf("fresh fleet: %d changes pending on %d hosts", doc.Totals.Changes, doc.Totals.HostsChanged)

	applied := w.cargoship(t, "apply", w.pkg.Path, "-c", inv, "--confirm", "-o", "json", "--detailed-exitcode")
	require.Equal(t, 2, applied.code, "an apply that changed the fleet exits 2; stderr:\n%s", tail(applied.stderr))
	doc = report(applied)
	assert.False(t, doc.DryRun)
	assert.True(t, doc.Changed)
	assert.True(t, doc.Complete, doc.Failure)
	assert.Positive(t, doc.Totals.BytesUploaded, "the package's files went up")
	for _, p := range doc.Phases {
		assert.NotEqual(t, "failed", p.Outcome, p.Title)
	}

	converged := w.cargoship(t, "apply", w.pkg.Path, "-c", inv, "--dry-run", "-o", "json", "--detailed-exitcode")
	require.Equal(t, 0, converged.code, "a dry run on a converged fleet exits 0; stdout:\n%s", converged.stdout)
	doc = report(converged)
	assert.False(t, doc.Changed)
	assert.Zero(t, doc.Totals.Changes)
	for _, h := range doc.Hosts {
		assert.Empty(t, h.Changes, h.Host)
	}

	// reset's report is the same document: a dry run lists what it would
	// take out, so it exits 2 too, and changes nothing.
	resetDry := w.cargoship(t, "reset", "-c", inv, "--distro", "k3s", "--dry-run", "-o", "json", "--detailed-exitcode")
	require.Equal(t, 2, resetDry.code, "a reset dry run on an installed fleet exits 2; stderr:\n%s", tail(resetDry.stderr))
	doc = report(resetDry)
	assert.Equal(t, "reset", doc.Command)
	assert.True(t, doc.Changed)

	// The summary for people says the same in words, with human sizes;
	// the reset dry run before it changed nothing.
	again := w.cargoship(t, "apply", w.pkg.Path, "-c", inv, "--confirm", "--detailed-exitcode")
	require.Equal(t, 0, again.code, "a converged apply exits 0; stderr:\n%s", tail(again.stderr))
	assert.Contains(t, string(again.stdout), "nothing changed: every host is already as the package and inventory describe")
	assert.Contains(t, string(again.stdout), "uploaded: 0 bytes")
	assert.False(t, json.Valid(again.stdout), "text is the default")
}

// tail is the end of a long log, enough to see why a run failed.
func tail(b []byte) []byte {
	const keep = 6000
	if len(b) <= keep {
		return b
	}
	return append([]byte("…"), b[bytes.IndexByte(b[len(b)-keep:], '\n')+len(b)-keep+1:]...)
}
