package log

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Color reports whether output to w may use colour and redraw itself
// (progress bars): only on a terminal, and only when nothing turned it off
// (off: --no-color, the no_color setting, NO_COLOR). A pipe or a file gets
// plain lines, so logs and scripts never see escape sequences.
func Color(w io.Writer, off bool) bool {
	return !off && IsTerminal(w)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
