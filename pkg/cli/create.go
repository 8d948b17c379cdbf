package cli

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

func init() { extraCommands = append(extraCommands, newCreateCommand) }

type createFlags struct {
	output      string
	arches      []string
	signingKey  string
	concurrency int
	insecure    bool
}

func newCreateCommand(app *App) *cobra.Command {
	var fl createFlags
	cmd := &cobra.Command{
		Use:   "create [DIR|FILE] -o OUTDIR",
		Short: "Build one offline package from a distro definition",
		Long: "create turns a distro definition (a distro.yaml, or a directory holding one) into one\n" +
			"verifiable package, cargoship-<name>-<arch|multi>-<version>.tar.zst: every file fetched and\n" +
			"checked, one image archive per architecture, a checksum for every entry, and an optional\n" +
			"ed25519 signature. It is the only cargoship step that needs a network. Downloads and image\n" +
			"blobs are cached (--cache-dir), so building the same definition again downloads nothing.",
		Example: "  cargoship create example/k3s/v1.35.3-k3s1 -o build/\n" +
			"  cargoship create distro.yaml -o build/ --architecture amd64,arm64 --signing-key cargoship.key",
		GroupID: groupPackage,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			def := "."
			if len(args) == 1 {
				def = args[0]
			}
			return runCreate(cmd, app, def, fl)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.output, "output", "o", "", "directory the package is written to (default: settings distro.create.output, else .)")
	f.StringSliceVarP(&fl.arches, "architecture", "a", nil, "architectures to build, comma separated (default: the definition's, else this machine's)")
	f.StringVar(&fl.signingKey, "signing-key", "", "ed25519 private key (PEM) to sign the package with; see cargoship keygen")
	f.IntVar(&fl.concurrency, "concurrency", 0, "parallel downloads and image pulls (default: settings distro.oci_concurrency, else 4)")
	f.BoolVar(&fl.insecure, "insecure-registry", false, "allow registries served over plain HTTP (local mirrors)")
	return cmd
}

func runCreate(cmd *cobra.Command, app *App, def string, fl createFlags) error {
	opts := pkgfile.CreateOptions{
		Definition:       def,
		OutputDir:        app.Settings.Output,
		Architectures:    fl.arches,
		Concurrency:      fl.concurrency,
		InsecureRegistry: fl.insecure,
		CacheDir:         app.Settings.CacheDir,
		TmpDir:           app.Settings.TmpDir,
		Log:              app.Log,
		ActionOutput:     app.Err,
	}
	if cmd.Flags().Changed("output") {
		opts.OutputDir = fl.output
	}
	if opts.OutputDir == "" {
		opts.OutputDir = "."
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = app.Settings.OCIConcurrency
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = pkgfile.DefaultConcurrency
	}
	if fl.signingKey != "" {
		key, err := pkgfile.LoadPrivateKey(fl.signingKey)
		if err != nil {
			return fmt.Errorf("--signing-key: %w", err)
		}
		opts.SigningKey = key
	}
	if v := app.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", v)
		}
		opts.BuildTime = time.Unix(secs, 0).UTC()
	}
	noColor, _ := cmd.Flags().GetBool("no-color")
	display := fetch.NewProgress(app.Err, !noColor && isTerminal(app.Err))
	opts.Progress = display

	// --timeout bounds create only when asked for: a large package on a
	// slow link may rightly take longer than the install default.
	ctx, cancel := app.timeoutContext(cmd, true)
	defer cancel()
	res, err := pkgfile.Create(ctx, opts)
	display.Wait()
	if err != nil {
		return fmt.Errorf("create package: %w", err)
	}
	_, err = fmt.Fprintln(app.Out, res.Path)
	return err
}

// isTerminal reports whether w is a terminal, for progress bars.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
