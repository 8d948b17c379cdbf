package cli

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/version"
)

func newVersionCommand(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version [--json]",
		Aliases: []string{"v"},
		Short:   "Print the version, commit, build date, Go version and platform of this binary",
		Long: "version prints what this binary was built from: the release version, the git commit (marked\n" +
			"\"(modified)\" when the checkout had uncommitted changes), the build date (a release's build time,\n" +
			"else the commit's time), the Go version and the platform. A release sets them at link time; a\n" +
			"go build in a checkout takes them from the VCS stamp Go records. `cargoship --version` prints the same.",
		Example: "  cargoship version\n" +
			"  cargoship version --json | jq -r .version",
		Args: cobra.NoArgs,
		// No settings are needed to print a version, so a broken settings
		// file cannot stop it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			if asJSON {
				return writeVersionJSON(app.Out, version.Get())
			}
			_, err := io.WriteString(app.Out, version.Get().Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print it as one JSON object (version, commit, date, modified, goVersion, platform)")
	return cmd
}

func writeVersionJSON(w io.Writer, in version.Info) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(in)
}

// setVersionFlag gives root --version (cobra adds the flag when Version is
// set), printing what `cargoship version` prints. The template is fixed
// text, not a template of the command: braces in a version must not be
// read as template actions.
func setVersionFlag(root *cobra.Command) {
	in := version.Get()
	root.Version = in.Version
	root.SetVersionTemplate(escapeTemplate(in.Text()))
	// Cobra adds this flag itself when missing; defined here it is in the
	// help and the command reference, with a usage that says what it prints.
	root.Flags().BoolP("version", "v", false, "print the version, commit, build date, Go version and platform, as the version command does")
}

// escapeTemplate makes s print as itself through text/template.
func escapeTemplate(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return "{{" + string(b) + "}}"
}
