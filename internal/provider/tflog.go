package provider

import (
	"context"
	"log/slog"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// tflogHandler sends a run's slog records to the provider's log, so every
// phase's progress shows under TF_LOG as the CLI's log shows it.
type tflogHandler struct {
	ctx    context.Context
	attrs  []slog.Attr
	prefix string // the group the next attributes belong to
}

func newRunLogger(ctx context.Context) *slog.Logger { return slog.New(&tflogHandler{ctx: ctx}) }

// Enabled implements slog.Handler: tflog filters by TF_LOG itself.
func (h *tflogHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (h *tflogHandler) Handle(_ context.Context, r slog.Record) error {
	fields := map[string]any{}
	for _, a := range h.attrs {
		fields[a.Key] = a.Value.Resolve().Any()
	}
	r.Attrs(func(a slog.Attr) bool {
		fields[h.prefix+a.Key] = a.Value.Resolve().Any()
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		tflog.Error(h.ctx, r.Message, fields)
	case r.Level >= slog.LevelWarn:
		tflog.Warn(h.ctx, r.Message, fields)
	case r.Level >= slog.LevelInfo:
		tflog.Info(h.ctx, r.Message, fields)
	default:
		tflog.Debug(h.ctx, r.Message, fields)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *tflogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		c.attrs = append(c.attrs, slog.Attr{Key: h.prefix + a.Key, Value: a.Value})
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *tflogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}
