// Package cli builds cargoship's command tree: one file per command, each
// turning flags into options and handing them to an action. No logic lives
// here that a test of the action could not reach.
package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	cslog "github.com/colonel-byte/cargoship/pkg/log"
)

// Command groups in help output.
const (
	groupPackage = "package"
	groupInstall = "install"
)

// App is what every command shares: resolved settings, a logger, streams.
type App struct {
	Settings Settings
	Log      *slog.Logger
	Out      io.Writer
	Err      io.Writer
	Getenv   func(string) string
	// LookupEnv tells an unset variable from an empty one
	// (SSH_KNOWN_HOSTS="" turns host key checking off).
	LookupEnv func(string) (string, bool)
}

// globalFlags are the persistent flags; a flag given wins over settings.
type globalFlags struct {
	logLevel, logFormat, tmpDir, cacheDir string
	timeout                               time.Duration
	noColor                               bool
}

// NewRootCommand builds the whole tree. out and errOut are where commands
// print and log; getenv reads the environment (tests pass their own).
func NewRootCommand(out, errOut io.Writer, lookupEnv func(string) (string, bool)) *cobra.Command {
	getenv := func(k string) string { v, _ := lookupEnv(k); return v }
	app := &App{Out: out, Err: errOut, Getenv: getenv, LookupEnv: lookupEnv, Settings: DefaultSettings()}
	var g globalFlags
	root := &cobra.Command{
		Use:           "cargoship COMMAND",
		Short:         "Puts Kubernetes onto fleets that cannot reach the internet",
		Long:          "cargoship builds one verified offline package of a Kubernetes distribution (k3s, rke2 or kubeadm)\nand installs it over SSH on every host of a cluster inventory.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return app.setup(cmd, &g)
		},
		Example: rootExample,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	setVersionFlag(root)
	root.AddGroup(
		&cobra.Group{ID: groupPackage, Title: "Package Commands:"},
		&cobra.Group{ID: groupInstall, Title: "Install Commands:"},
	)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.logLevel, "log-level", "l", "", "log level: debug, info, warn, error (default info; CARGOSHIP_LOG_LEVEL)")
	pf.StringVarP(&g.logFormat, "log-format", "L", "", "log format: console, json (default console; CARGOSHIP_LOG_FORMAT)")
	pf.StringVar(&g.tmpDir, "tmpdir", "", "base directory for temporary files (CARGOSHIP_TMP_DIR)")
	pf.StringVar(&g.cacheDir, "cache-dir", "", "download and image cache (default: the user cache dir; CARGOSHIP_CACHE_DIR)")
	pf.DurationVar(&g.timeout, "timeout", 0, "how long one run may take (default 20m; CARGOSHIP_TIMEOUT)")
	pf.BoolVar(&g.noColor, "no-color", false, "no colours and no progress bars")

	root.AddCommand(
		newVersionCommand(app),
		newValidateCommand(app),
	)
	for _, c := range extraCommands {
		root.AddCommand(c(app))
	}
	return root
}

// extraCommands are commands defined in other files of this package; each
// file appends its constructor so the tree stays one list.
var extraCommands []func(*App) *cobra.Command

// setup resolves settings and the logger before any command runs.
func (a *App) setup(cmd *cobra.Command, g *globalFlags) error {
	s, err := LoadSettings(a.Getenv)
	if err != nil {
		return err
	}
	f := cmd.Flags()
	if f.Changed("log-level") {
		s.LogLevel = g.logLevel
	}
	if f.Changed("log-format") {
		s.LogFormat = g.logFormat
	}
	if f.Changed("tmpdir") {
		s.TmpDir = g.tmpDir
	}
	if f.Changed("cache-dir") {
		s.CacheDir = g.cacheDir
	}
	if f.Changed("timeout") {
		s.Timeout = g.timeout
	}
	a.Settings = s
	a.Log, err = cslog.New(a.Err, s.LogLevel, s.LogFormat)
	if err != nil {
		return err
	}
	a.logSettingsWarnings() // e.g. the deprecated CARGOSHIP_CONFIG, for every command
	if s.File != "" {
		a.Log.Debug("using settings file", "path", s.File)
	}
	return nil
}

// Main runs cargoship with the process's arguments and returns the exit code.
func Main() int {
	ctx, stop := signalContext()
	defer stop()
	root := NewRootCommand(os.Stdout, os.Stderr, os.LookupEnv)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit *ExitError
	if asExit(err, &exit) {
		if exit.Err != nil {
			printError(os.Stderr, exit.Err)
		}
		return exit.Code
	}
	printError(os.Stderr, err)
	return 1
}

// timeoutContext is cmd's context bounded by the run's timeout: the one
// place in pkg/cli where --timeout becomes a deadline (apply and prepare
// hand Settings.Timeout to action.Run, which bounds the phases with it).
// With onlyIfGiven, as create has it, the bound applies only when the user
// gave a timeout with --timeout or CARGOSHIP_TIMEOUT; otherwise
// Settings.Timeout applies (--timeout, CARGOSHIP_TIMEOUT, the settings
// file, else 20m). A timeout of 0 or less bounds nothing.
func (a *App) timeoutContext(cmd *cobra.Command, onlyIfGiven bool) (context.Context, context.CancelFunc) {
	given := cmd.Flags().Changed("timeout") || a.Getenv(EnvPrefix+"TIMEOUT") != ""
	if t := a.Settings.Timeout; t > 0 && (given || !onlyIfGiven) {
		return context.WithTimeout(cmd.Context(), t)
	}
	return context.WithCancel(cmd.Context())
}
