package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/cli/schemacheck"
)

const reportSchema = "../../schema/" + node.ReportSchemaFile

// fleetWith is a run's state over two hosts whose report holds changes.
func fleetWith(dry bool, changes ...node.Change) *node.Fleet {
	st := &node.Fleet{Report: &node.Report{}, Options: node.Options{DryRun: dry}}
	for _, name := range []string{"kc0", "kw0"} {
		st.Hosts = append(st.Hosts, &node.Host{Spec: &v1alpha1.Host{Hostname: name}})
	}
	for _, c := range changes {
		st.Report.Add(c)
	}
	st.Report.AddTiming(node.PhaseTiming{Title: "Connect to hosts", Outcome: "ran"})
	return st
}

// TestDetailedExitcode is terraform plan's contract: 0 nothing to do, 2
// changes (made, or pending in a dry run), 1 an error, which wins over 2.
func TestDetailedExitcode(t *testing.T) {
	change := node.Change{Host: "kc0", Phase: "Prepare hosts", What: "write /etc/environment"}
	failed := errors.New(`phase "Join workers": no token`)
	for _, tc := range []struct {
		name     string
		detailed bool
		dry      bool
		changes  []node.Change
		runErr   error
		want     int // 0, 1 (an error) or 2
	}{
		{"converged", true, false, nil, nil, 0},
		{"converged dry run", true, true, nil, nil, 0},
		{"changes made", true, false, []node.Change{change}, nil, ExitChanged},
		{"changes pending", true, true, []node.Change{change}, nil, ExitChanged},
		{"changes before a failure", true, false, []node.Change{change}, failed, 1},
		{"a failure", true, true, nil, failed, 1},
		{"changes without the flag", false, false, []node.Change{change}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{outputText, outputJSON} {
				f := outputFlags{format: format, detailedExit: tc.detailed}
				var out bytes.Buffer
				err := f.finish(&out, "apply", fleetWith(tc.dry, tc.changes...), tc.runErr)
				var exit *ExitError
				switch tc.want {
				case 0:
					require.NoError(t, err, format)
				case 1:
					require.ErrorIs(t, err, tc.runErr, format)
					assert.NotErrorAs(t, err, &exit, "an error exits 1, not with a code of its own")
				default:
					require.ErrorAs(t, err, &exit, format)
					assert.Equal(t, tc.want, exit.Code)
					require.NoError(t, exit.Err, "exit 2 prints no error")
				}
				assert.NotEmpty(t, out.String(), "%s: the report is printed whatever the exit", format)
			}
		})
	}
}

// TestOutputJSONIsTheReport: -o json prints one document, valid against
// schema/report.schema.json, and nothing else; text prints the summary.
func TestOutputJSONIsTheReport(t *testing.T) {
	schema, err := os.ReadFile(reportSchema)
	require.NoError(t, err)
	st := fleetWith(true, node.Change{Host: "kw0", Phase: "Upload files to hosts", What: "upload images (3 bytes)"})

	var out bytes.Buffer
	require.NoError(t, (&outputFlags{format: outputJSON}).finish(&out, "prepare", st, nil))
	errs, err := schemacheck.Validate(schema, out.Bytes())
	require.NoError(t, err)
	assert.Empty(t, errs, out.String())
	var doc node.ReportDocument
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, "prepare", doc.Command)
	assert.True(t, doc.DryRun)
	assert.Equal(t, []string{"kc0", "kw0"}, []string{doc.Hosts[0].Host, doc.Hosts[1].Host})
	assert.Empty(t, doc.Hosts[0].Changes)
	assert.Equal(t, "upload images (3 bytes)", doc.Hosts[1].Changes[0].What)

	out.Reset()
	require.NoError(t, (&outputFlags{format: outputText}).finish(&out, "prepare", st, nil))
	assert.Contains(t, out.String(), "would change:\n  kw0\n    [Upload files to hosts] upload images")
	assert.False(t, json.Valid(out.Bytes()))
}

// TestOutputFlagsOnInstallCommands: apply, prepare and reset take -o and
// --detailed-exitcode, and an unknown format stops the run before any
// document is read.
func TestOutputFlagsOnInstallCommands(t *testing.T) {
	inv := unreachableInventory(t)
	for _, args := range [][]string{
		{"apply", "missing.tar.zst"}, {"prepare", "missing.tar.zst"}, {"reset", "--distro", "k3s"},
	} {
		_, _, err := runCLI(t, nil, append(args, "-c", inv, "--dry-run", "--detailed-exitcode", "-o", "yaml")...)
		require.ErrorContains(t, err, `--output "yaml": one of text or json`, "%v", args)
	}
}

// TestResetJSONAfterAFailure runs the real command to a host that does not
// answer: the JSON report still comes out on stdout, says the run is
// incomplete and why, checks against the schema, and the command fails
// (exit 1), --detailed-exitcode or not.
func TestResetJSONAfterAFailure(t *testing.T) {
	schema, err := os.ReadFile(reportSchema)
	require.NoError(t, err)
	out, logged, err := runCLI(t, nil, "reset", "-c", unreachableInventory(t), "--distro", "k3s", "--dry-run", "-o", "json", "--detailed-exitcode", "--timeout", "1s")
	require.ErrorContains(t, err, `phase "Connect to hosts"`)
	var exit *ExitError
	assert.NotErrorAs(t, err, &exit, "a failed run exits 1")
	errs, verr := schemacheck.Validate(schema, []byte(out))
	require.NoError(t, verr, "stdout is one JSON document:\n%s", out)
	assert.Empty(t, errs)
	var doc node.ReportDocument
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "reset", doc.Command)
	assert.False(t, doc.Complete)
	assert.Contains(t, doc.Failure, `phase "Connect to hosts"`)
	assert.Equal(t, "127.0.0.1", doc.Hosts[0].Host)
	assert.Contains(t, logged, "Connect to hosts", "logs go to stderr, not into the document")
}
