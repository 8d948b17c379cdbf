package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestConsoleHandlerLines(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(newConsoleHandler(&out, slog.LevelInfo, false))
	log.Info("running phase", "phase", "Connect to hosts")
	log.Info("running phase (reads only)", "phase", "Detect host operating systems")
	log.Info("detected", "host", "kc0", "os", "Debian GNU/Linux 12", "route", "apt")
	log.With("host", "kw0").Warn("not applied", "phase", "Prepare hosts", "reason", "read-only")
	log.Error("phase failed", "phase", "Join workers", "error", errors.New("no token"))
	log.Debug("not shown at info")
	log.Info("finished", "duration", "1.2s", "empty", "")
	assert.Equal(t, "INFO ==> Running phase: Connect to hosts\n"+
		"INFO ==> Running phase: Detect host operating systems (reads only)\n"+
		"INFO [kc0] detected os=\"Debian GNU/Linux 12\" route=apt\n"+
		"WARN [kw0] not applied phase=\"Prepare hosts\" reason=read-only\n"+
		"ERRO phase failed phase=\"Join workers\": no token\n"+
		"INFO finished duration=1.2s empty=\"\"\n", out.String())
}

func TestConsoleHandlerColor(t *testing.T) {
	var out bytes.Buffer
	slog.New(newConsoleHandler(&out, slog.LevelDebug, true)).Info("running phase", "phase", "Connect to hosts")
	assert.Equal(t, "\x1b[36mINFO\x1b[0m \x1b[1m==> Running phase: Connect to hosts\x1b[0m\n", out.String())

	out.Reset()
	slog.New(newConsoleHandler(&out, slog.LevelDebug, false)).Warn("x", "host", "kc0")
	assert.NotContains(t, out.String(), "\x1b[", "no colour: no escape sequence at all")
}

func TestDumbTerminal(t *testing.T) {
	env := func(term string) func(string) (string, bool) {
		return func(k string) (string, bool) { return term, k == "TERM" && term != "" }
	}
	assert.True(t, dumbTerminal(env("dumb")))
	assert.False(t, dumbTerminal(env("xterm-256color")))
	assert.False(t, dumbTerminal(env("")))
}

// TestInstallLogOffATerminal: a pipe or a buffer keeps the run's own
// logger, whatever the format, so scripts read what they always read.
func TestInstallLogOffATerminal(t *testing.T) {
	app := &App{Err: &bytes.Buffer{}, Log: slog.New(slog.DiscardHandler), Settings: DefaultSettings()}
	cmd := &cobra.Command{}
	cmd.Flags().Bool("no-color", false, "")
	assert.Same(t, app.Log, installLog(cmd, app))
	app.Settings.LogFormat = "json"
	assert.Same(t, app.Log, installLog(cmd, app))
}
