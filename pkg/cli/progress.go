package cli

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// uploadProgress picks how apply and prepare show their uploads on
// standard error: a bar per host where colorOn allows redrawing (a
// terminal, and neither --no-color nor NO_COLOR), else a line per
// finished upload through the run's logger. Standard output, where the
// report goes (-o json among them), never gets either. nil (no logger)
// shows nothing.
func uploadProgress(cmd *cobra.Command, app *App, log *slog.Logger) node.Progress {
	switch {
	case app.colorOn(cmd, app.Err):
		return newBarProgress(app.Err)
	case log != nil:
		return newLineProgress(log)
	}
	return nil
}
