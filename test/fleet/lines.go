package fleet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// LineHandler prints the fleet's progress records plainly to w, one
// indented line each ("  ready: kc0 2.6s"), for a person watching hosts
// boot: Info and above, attributes as key=value, the level named only from
// Warn up.
func LineHandler(w io.Writer) slog.Handler { return lineHandler{w: w} }

type lineHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("  ")
	if r.Level >= slog.LevelWarn {
		b.WriteString(r.Level.String() + ": ")
	}
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true }
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return lineHandler{w: h.w, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h lineHandler) WithGroup(string) slog.Handler { return h }
