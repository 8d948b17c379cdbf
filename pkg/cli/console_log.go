package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	cslog "github.com/colonel-byte/cargoship/pkg/log"
)

// installLog is the logger apply, prepare and reset walk the phases with.
// On a terminal, with the default console format, it prints as k0sctl
// does: a header per phase and one line per host, no timestamps or
// key=value noise around them. Anywhere else (a pipe, a file, CI, a
// format chosen with --log-format) it is the run's ordinary logger, so
// what scripts and log collectors read does not change.
func installLog(cmd *cobra.Command, app *App) *slog.Logger {
	if app.Log == nil || app.Settings.LogFormat != "console" || !onTerminal(app.Err) {
		return app.Log
	}
	level, err := cslog.ParseLevel(app.Settings.LogLevel)
	if err != nil {
		return app.Log // setup already refused a bad level; keep its logger
	}
	// colorOn is the settings' word on colour: --no-color, no_color,
	// NO_COLOR, CARGOSHIP_NO_COLOR.
	color := app.colorOn(cmd, app.Err) && !dumbTerminal(app.LookupEnv)
	return slog.New(newConsoleHandler(app.Err, level, color))
}

// dumbTerminal reports a terminal that takes no escape sequences.
func dumbTerminal(lookupEnv func(string) (string, bool)) bool {
	t, _ := lookupEnv("TERM")
	return t == "dumb"
}

// onTerminal reports whether w is a terminal.
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ANSI styles of the console lines.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiGray   = "\x1b[90m"
)

// consoleHandler writes one line per record:
//
//	INFO ==> Running phase: Connect to hosts
//	INFO [kc0] detected os="Debian GNU/Linux 12" route=apt
//	ERRO phase failed phase="Join workers": no token
type consoleHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	color bool
	attrs []slog.Attr // from With, before the record's own
}

func newConsoleHandler(w io.Writer, level slog.Leveler, color bool) *consoleHandler {
	return &consoleHandler{mu: &sync.Mutex{}, w: w, level: level, color: color}
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *consoleHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

// WithGroup is not used by cargoship's logging; the group's attributes
// are printed without their prefix rather than lost.
func (h *consoleHandler) WithGroup(string) slog.Handler { return h }

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	var host, phase string
	var rest []slog.Attr
	collect := func(a slog.Attr) bool {
		switch v := a.Value.Resolve(); {
		case a.Key == "host" && v.Kind() == slog.KindString:
			host = v.String()
		case a.Key == "phase" && v.Kind() == slog.KindString:
			phase = v.String()
		default:
			rest = append(rest, a)
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)

	var b strings.Builder
	b.WriteString(h.style(levelStyle(r.Level), levelName(r.Level)))
	b.WriteByte(' ')
	switch {
	case phase != "" && strings.HasPrefix(r.Message, "running phase"):
		// The header: a phase starts. "(reads only)" is a dry run's.
		b.WriteString(h.style(ansiBold, "==> Running phase: "+phase+strings.TrimPrefix(r.Message, "running phase")))
	case host != "":
		b.WriteString(h.style(ansiBold, "["+host+"]") + " " + r.Message)
	default:
		b.WriteString(r.Message)
	}
	if phase != "" && !strings.HasPrefix(r.Message, "running phase") {
		rest = append([]slog.Attr{slog.String("phase", phase)}, rest...)
	}
	var errText string
	for _, a := range rest {
		if a.Key == "error" {
			errText = a.Value.Resolve().String() // last, as it is: it is read, not parsed
			continue
		}
		b.WriteString(" " + h.style(ansiGray, a.Key+"=") + quoteValue(a.Value.Resolve().String()))
	}
	if errText != "" {
		b.WriteString(": " + h.style(levelStyle(r.Level), errText))
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *consoleHandler) style(code, s string) string {
	if !h.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERRO"
	case l >= slog.LevelWarn:
		return "WARN"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBU"
}

func levelStyle(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return ansiRed
	case l >= slog.LevelWarn:
		return ansiYellow
	case l >= slog.LevelInfo:
		return ansiCyan
	}
	return ansiGray
}

// quoteValue quotes a value a reader could not tell apart otherwise.
func quoteValue(s string) string {
	if s == "" || strings.ContainsAny(s, " =\"\t\n") {
		return strconv.Quote(s)
	}
	return s
}
