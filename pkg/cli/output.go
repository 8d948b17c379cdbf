package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// The report formats -o takes.
const (
	outputText = "text"
	outputJSON = "json"
)

// ExitChanged is the exit status --detailed-exitcode gives a run that
// changed something or, with --dry-run, would: terraform plan's 2.
const ExitChanged = 2

// outputFlags say how apply, prepare and reset end: the report's format on
// standard output and what the exit status tells. Logs go to standard
// error whatever the format, so stdout stays one parseable document.
type outputFlags struct {
	format       string
	detailedExit bool
}

func (f *outputFlags) register(fl *pflag.FlagSet) {
	fl.StringVarP(&f.format, "output", "o", outputText, "how the report is printed on standard output: text (the summary) or json (one document, schema/report.schema.json); logs stay on standard error")
	fl.BoolVar(&f.detailedExit, "detailed-exitcode", false, "exit 0 when nothing changed (with --dry-run: nothing would), 2 when something changed (with --dry-run: would), 1 on an error")
}

// check refuses an unknown format before any host is touched.
func (f *outputFlags) check() error {
	switch f.format {
	case outputText, outputJSON:
		return nil
	}
	return fmt.Errorf("--output %q: one of %s or %s", f.format, outputText, outputJSON)
}

// finish prints the run's report, also after a failure (what did change
// matters most then), and turns the run into the command's result: the
// run's error, else with --detailed-exitcode an ExitError of ExitChanged
// when the report lists any change.
func (f *outputFlags) finish(w io.Writer, command string, st *node.Fleet, runErr error) error {
	dry := st.Options.DryRun
	var werr error
	if f.format == outputJSON {
		hosts := make([]string, 0, len(st.Hosts))
		for _, h := range st.Hosts {
			hosts = append(hosts, h.String())
		}
		werr = st.Report.Document(command, dry, hosts).WriteJSON(w)
	} else {
		_, werr = fmt.Fprint(w, st.Report.Summary(dry))
	}
	switch {
	case runErr != nil:
		return runErr
	case werr != nil:
		return fmt.Errorf("printing the report: %w", werr)
	case f.detailedExit && len(st.Report.Changes()) > 0:
		return &ExitError{Code: ExitChanged}
	}
	return nil
}
