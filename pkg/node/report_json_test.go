package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/e2e/cli/schemacheck"
)

const reportSchemaPath = "../../schema/" + ReportSchemaFile

// TestReportSchemaUpToDate regenerates the schema from ReportDocument and
// its doc comments and fails when schema/report.schema.json differs.
func TestReportSchemaUpToDate(t *testing.T) {
	got, err := ReportSchema(".")
	require.NoError(t, err)
	committed, err := os.ReadFile(reportSchemaPath)
	require.NoError(t, err, "run go generate ./... (or go run ./hack/genschema)")
	assert.True(t, bytes.Equal(committed, got), "schema/%s is stale: run go generate ./... (or go run ./hack/genschema)", ReportSchemaFile)

	abs, err := filepath.Abs(".")
	require.NoError(t, err)
	there, err := ReportSchema(abs)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(there), "the schema depends on the directory it is generated from")

	var s map[string]any
	require.NoError(t, json.Unmarshal(got, &s))
	phase := s["$defs"].(map[string]any)["PhaseReport"].(map[string]any)
	outcome := phase["properties"].(map[string]any)["outcome"].(map[string]any)
	assert.Contains(t, outcome["description"], "unassessed (a dry run could not tell", "descriptions are the doc comments")
}

// sampleReports are the shapes a run ends in: converged, changes made
// with uploads, a dry run with work pending and a note, and a failure.
func sampleReports() map[string]*Report {
	converged := &Report{}
	converged.AddTiming(PhaseTiming{Title: "Connect to hosts", Outcome: "ran", Duration: 142 * time.Millisecond})
	converged.AddTiming(PhaseTiming{Title: "Upload files to hosts – RPM", Outcome: "skipped"})

	applied := &Report{}
	applied.Add(Change{Host: "kw0", Phase: "Upload files to hosts", What: "uploaded images/images-amd64.tar.zst", Bytes: 83361792})
	applied.Add(Change{Host: "kc0", Phase: "Prepare hosts", What: "write /etc/sysctl.d/90-cargoship.conf"})
	applied.Add(Change{Host: "kc0", Phase: "Upload files to hosts", What: "uploaded os/0/k3s", Bytes: 1024})
	applied.AddTiming(PhaseTiming{Title: "Prepare hosts", Outcome: "ran", Duration: 1204 * time.Millisecond})
	applied.AddTiming(PhaseTiming{Title: "Upload files to hosts", Outcome: "ran", Duration: 3 * time.Second})

	dry := &Report{}
	dry.Add(Change{Host: "kc0", Phase: "Prepare hosts", What: "write /etc/modules-load.d/cargoship.conf"})
	dry.Add(Change{Host: clusterHost, Phase: "Wait for nodes", What: "would run"})
	dry.Note("no host runs k3s yet: this is an install")
	dry.AddTiming(PhaseTiming{Title: "Prepare hosts", Outcome: "reported", Detail: "1 change(s)"})
	dry.AddTiming(PhaseTiming{Title: "Join workers", Outcome: "unassessed", Detail: "needs the token"})
	dry.AddTiming(PhaseTiming{Title: "Gather facts", Outcome: "dry-run"})

	failed := &Report{}
	failed.Add(Change{Host: "kc0", Phase: "Prepare hosts", What: "write /etc/environment"})
	failed.AddTiming(PhaseTiming{Title: "Updating hosts firewall", Outcome: "failed"})
	failed.Fail(errors.New(`phase "Updating hosts firewall": plan: no front end`))
	return map[string]*Report{"converged": converged, "applied": applied, "dry": dry, "failed": failed}
}

// TestReportDocument pins what each field says for the shapes a run ends in.
func TestReportDocument(t *testing.T) {
	r := sampleReports()
	hosts := []string{"kc0", "kw0", "kw1"}

	c := r["converged"].Document("apply", false, hosts)
	assert.False(t, c.Changed)
	assert.True(t, c.Complete)
	assert.Empty(t, c.Failure)
	require.Len(t, c.Hosts, 3, "every host is listed, changed or not")
	for _, h := range c.Hosts {
		assert.Empty(t, h.Changes, h.Host)
	}
	assert.Equal(t, []PhaseReport{{Title: "Connect to hosts", Outcome: "ran", DurationMs: 142}, {Title: "Upload files to hosts – RPM", Outcome: "skipped"}}, c.Phases)
	assert.Equal(t, ReportTotals{DurationMs: 142}, c.Totals)
	assert.Equal(t, "colonel-byte.dev/v1alpha1", c.APIVersion)
	assert.Equal(t, "Report", c.Kind)

	a := r["applied"].Document("apply", false, hosts)
	assert.True(t, a.Changed)
	assert.Equal(t, []string{"kc0", "kw0", "kw1"}, hostNames(a), "the inventory's order, not the order of the changes")
	assert.Equal(t, []ChangeReport{{Phase: "Prepare hosts", What: "write /etc/sysctl.d/90-cargoship.conf"}, {Phase: "Upload files to hosts", What: "uploaded os/0/k3s", Bytes: 1024}}, a.Hosts[0].Changes)
	assert.EqualValues(t, 1024, a.Hosts[0].BytesUploaded)
	assert.EqualValues(t, 83361792, a.Hosts[1].BytesUploaded)
	assert.Equal(t, ReportTotals{Changes: 3, HostsChanged: 2, BytesUploaded: 83361792 + 1024, DurationMs: 4204}, a.Totals)

	d := r["dry"].Document("apply", true, hosts)
	assert.True(t, d.DryRun)
	assert.True(t, d.Changed, "pending work is a change for --detailed-exitcode")
	assert.Equal(t, []string{"kc0", "kw0", "kw1", clusterHost}, hostNames(d), "work no host is named for comes after the inventory's hosts")
	assert.Equal(t, []string{"no host runs k3s yet: this is an install"}, d.Notes)

	f := r["failed"].Document("reset", false, hosts)
	assert.False(t, f.Complete)
	assert.Equal(t, `phase "Updating hosts firewall": plan: no front end`, f.Failure)
	assert.True(t, f.Changed, "what changed before the failure is still listed")

	// A failed phase the manager timed without Fail still fails the run.
	timedOnly := &Report{}
	timedOnly.AddTiming(PhaseTiming{Title: "Connect to hosts", Outcome: "failed"})
	assert.Equal(t, `phase "Connect to hosts" failed`, timedOnly.Document("apply", true, nil).Failure)
}

func hostNames(d ReportDocument) []string {
	var out []string
	for _, h := range d.Hosts {
		out = append(out, h.Host)
	}
	return out
}

// TestReportJSONMatchesSchema writes every sample as -o json does and
// validates it against the committed schema; a document the schema must
// refuse proves the check can fail.
func TestReportJSONMatchesSchema(t *testing.T) {
	schema, err := os.ReadFile(reportSchemaPath)
	require.NoError(t, err)
	for name, r := range sampleReports() {
		for _, hosts := range [][]string{nil, {"kc0", "kw0"}} {
			var buf bytes.Buffer
			require.NoError(t, r.Document("apply", name == "dry", hosts).WriteJSON(&buf))
			errs, err := schemacheck.Validate(schema, buf.Bytes())
			require.NoError(t, err, name)
			assert.Empty(t, errs, "%s:\n%s", name, buf.String())
			assert.Equal(t, byte('\n'), buf.Bytes()[buf.Len()-1], "one document, one line end")
		}
	}

	var buf bytes.Buffer
	doc := sampleReports()["dry"].Document("apply", true, nil)
	doc.Phases[0].Outcome = "maybe"
	doc.Hosts[0].Changes[0].Bytes = -1
	require.NoError(t, doc.WriteJSON(&buf))
	errs, err := schemacheck.Validate(schema, buf.Bytes())
	require.NoError(t, err)
	assert.Len(t, errs, 2, "an unknown outcome and a negative size: %v", errs)

	var loose map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &loose))
	delete(loose, "totals")
	loose["extra"] = true
	data, err := json.Marshal(loose)
	require.NoError(t, err)
	errs, err = schemacheck.Validate(schema, data)
	require.NoError(t, err)
	assert.Contains(t, errs, `(document): "totals" is required`)
	assert.Contains(t, errs, "extra: unknown key")
}
