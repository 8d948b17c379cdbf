package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// ReportKind is the kind of the document `-o json` prints.
const ReportKind = "Report"

// ReportSchemaFile is the report's schema in schema/, generated from
// ReportDocument by hack/genschema; reportSchemaURL is where it is
// published, beside the documents' schemas.
const (
	ReportSchemaFile = "report.schema.json"
	reportSchemaURL  = "https://raw.githubusercontent.com/colonel-byte/cargoship/main/schema/" + ReportSchemaFile
)

// ReportDocument is the report of one apply, prepare or reset as `-o json`
// prints it on standard output: what changed (or, in a dry run, would
// change) on each host, how every phase ended, and the notes.
type ReportDocument struct {
	// APIVersion is the version of this document's shape.
	APIVersion string `json:"apiVersion" jsonschema:"enum=colonel-byte.dev/v1alpha1"`
	// Kind is always Report.
	Kind string `json:"kind" jsonschema:"enum=Report"`
	// Command is the command that made the run.
	Command string `json:"command" jsonschema:"enum=apply,enum=prepare,enum=reset"`
	// DryRun is true for a --dry-run: the changes listed are pending, none was made.
	DryRun bool `json:"dryRun"`
	// Changed is true when any change was made or, in a dry run, is pending: --detailed-exitcode then exits 2.
	Changed bool `json:"changed"`
	// Complete is false when the run failed: the changes listed are those before the failure, and a failed dry run never assessed the failed phase and those after it.
	Complete bool `json:"complete"`
	// Failure is why the run stopped; absent when it did not fail.
	Failure string `json:"failure,omitempty"`
	// Hosts lists every host of the inventory, in its order, with its changes; work no host is named for is under the host "(cluster)".
	Hosts []HostReport `json:"hosts"`
	// Phases lists every phase considered, in run order.
	Phases []PhaseReport `json:"phases"`
	// Notes are things to know that are not changes: an install rather than an upgrade, a route that claimed no host, a setting a host refused.
	Notes []string `json:"notes"`
	// Totals sum the hosts and phases.
	Totals ReportTotals `json:"totals"`
}

// HostReport is one host's part of the report.
type HostReport struct {
	// Host names the host as the summary does: its inventory hostname, else its address.
	Host string `json:"host"`
	// Changes are what changed on the host, or would change, in the order found.
	Changes []ChangeReport `json:"changes"`
	// BytesUploaded is what was sent to the host over the wire; 0 in a dry run.
	BytesUploaded int64 `json:"bytesUploaded" jsonschema:"minimum=0"`
}

// ChangeReport is one change on a host.
type ChangeReport struct {
	// Phase is the title of the phase that made the change, or found it.
	Phase string `json:"phase"`
	// What says what changed: the file written, the package installed, the service restarted.
	What string `json:"what"`
	// Bytes is what the change uploaded; 0 for a change that is not an upload, and in a dry run.
	Bytes int64 `json:"bytes" jsonschema:"minimum=0"`
}

// PhaseReport is how one phase ended.
type PhaseReport struct {
	// Title is the phase's title, as docs/apply.md heads its section.
	Title string `json:"title"`
	// Outcome is how the phase ended: ran; skipped (nothing to do); reported (a dry run listed its work without running it); unassessed (a dry run could not tell its work without an earlier phase run for real); dry-run (its own dry-run path ran); failed.
	Outcome string `json:"outcome" jsonschema:"enum=ran,enum=skipped,enum=reported,enum=unassessed,enum=dry-run,enum=failed"`
	// DurationMs is how long the phase took, in milliseconds.
	DurationMs int64 `json:"durationMs" jsonschema:"minimum=0"`
	// Detail is what the summary prints beside the phase: a reported phase's count of changes, why a phase was unassessed.
	Detail string `json:"detail,omitempty"`
}

// ReportTotals sum the report.
type ReportTotals struct {
	// Changes counts every change on every host.
	Changes int `json:"changes" jsonschema:"minimum=0"`
	// HostsChanged counts the hosts with at least one change.
	HostsChanged int `json:"hostsChanged" jsonschema:"minimum=0"`
	// BytesUploaded is what every upload sent, all hosts together.
	BytesUploaded int64 `json:"bytesUploaded" jsonschema:"minimum=0"`
	// DurationMs is the time the phases took together, in milliseconds.
	DurationMs int64 `json:"durationMs" jsonschema:"minimum=0"`
}

// clusterHost is the host name the phase manager gives work that names no
// host (a reported phase without a plan).
const clusterHost = "(cluster)"

// Document is the report as the JSON document of a run of command. hosts
// are the inventory's hosts as Host.String names them: each is listed even
// when nothing changed on it, so a script can tell a converged host from a
// host the run did not cover.
func (r *Report) Document(command string, dryRun bool, hosts []string) ReportDocument {
	doc := ReportDocument{
		APIVersion: v1alpha1.GroupVersion, Kind: ReportKind, Command: command, DryRun: dryRun,
		Complete: true, Hosts: []HostReport{}, Phases: []PhaseReport{}, Notes: r.Notes(),
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if err := r.runFailure(); err != nil {
		doc.Complete, doc.Failure = false, err.Error()
	}
	index := map[string]int{}
	hostIndex := func(name string) int {
		i, ok := index[name]
		if !ok {
			i = len(doc.Hosts)
			index[name] = i
			doc.Hosts = append(doc.Hosts, HostReport{Host: name, Changes: []ChangeReport{}})
		}
		return i
	}
	for _, h := range hosts {
		hostIndex(h)
	}
	changes := r.Ordered()
	// Hosts the inventory does not name (the cluster-wide entry) come
	// after the inventory's, sorted, so the order is stable.
	var extra []string
	for _, c := range changes {
		if _, ok := index[c.Host]; !ok && !slices.Contains(extra, c.Host) {
			extra = append(extra, c.Host)
		}
	}
	slices.Sort(extra)
	for _, h := range extra {
		hostIndex(h)
	}
	for _, c := range changes {
		h := &doc.Hosts[hostIndex(c.Host)]
		h.Changes = append(h.Changes, ChangeReport{Phase: c.Phase, What: c.What, Bytes: c.Bytes})
		h.BytesUploaded += c.Bytes
		doc.Totals.Changes++
		doc.Totals.BytesUploaded += c.Bytes
	}
	for _, h := range doc.Hosts {
		if len(h.Changes) > 0 {
			doc.Totals.HostsChanged++
		}
	}
	doc.Changed = doc.Totals.Changes > 0
	for _, t := range r.Timings() {
		ms := t.Duration.Milliseconds()
		doc.Phases = append(doc.Phases, PhaseReport{Title: t.Title, Outcome: t.Outcome, DurationMs: ms, Detail: t.Detail})
		doc.Totals.DurationMs += ms
	}
	return doc
}

// WriteJSON writes the document indented, one JSON value and a newline.
func (d ReportDocument) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("writing the report as JSON: %w", err)
	}
	return nil
}

// ReportSchema returns the JSON schema (draft 2020-12) of ReportDocument,
// the bytes of schema/report.schema.json. srcDir is this package's source
// directory: the descriptions are the doc comments above.
func ReportSchema(srcDir string) ([]byte, error) {
	const pkg = "github.com/colonel-byte/cargoship/pkg/node"
	c := &jsonschema.Reflector{}
	if err := c.AddGoComments(pkg, filepath.Clean(srcDir)); err != nil {
		return nil, fmt.Errorf("reading doc comments in %s: %w", srcDir, err)
	}
	// The library keys comments by the import path joined with the
	// directory walked; re-key them so any working directory gives the
	// same bytes.
	walked := path.Join(pkg, filepath.ToSlash(filepath.Clean(srcDir)))
	comments := map[string]string{}
	for k, v := range c.CommentMap {
		if rest, ok := strings.CutPrefix(k, walked+"."); ok {
			comments[pkg+"."+rest] = v
		}
	}
	r := &jsonschema.Reflector{ExpandedStruct: true, CommentMap: comments}
	s := r.Reflect(&ReportDocument{})
	s.ID = jsonschema.ID(reportSchemaURL)
	s.Title = "cargoship run report (apply, prepare or reset -o json)"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", ReportSchemaFile, err)
	}
	return buf.Bytes(), nil
}
