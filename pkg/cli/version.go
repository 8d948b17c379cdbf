package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/version"
)

func newVersionCommand(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Aliases: []string{"v"},
		Short:   "Print the version of this binary",
		Args:    cobra.NoArgs,
		// No settings are needed to print a version, so a broken settings
		// file cannot stop it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(app.Out, version.String())
			return err
		},
	}
}
