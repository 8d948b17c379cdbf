package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/image"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

func init() { extraCommands = append(extraCommands, newCreateCommand) }

type createFlags struct {
	output            string
	arches            []string
	signingKey        string
	concurrency       int
	insecure          bool
	registryOverrides []string
	skipSBOM          bool
}

func newCreateCommand(app *App) *cobra.Command {
	var fl createFlags
	cmd := &cobra.Command{
		Use:   "create [DIR|FILE] -o OUTDIR",
		Short: "Build one offline package from a distro definition",
		Long: "create turns a distro definition (a distro.yaml, or a directory holding one) into one\n" +
			"verifiable package, cargoship-<name>-<arch|multi>-<version>.tar.zst: every file fetched and\n" +
			"checked, one image archive per architecture, a CycloneDX SBOM of every file and image\n" +
			"(cargoship inspect --sbom prints it), a checksum for every entry, and an optional ed25519\n" +
			"signature. It is the only cargoship step that needs a network. Downloads and image blobs are\n" +
			"cached (--cache-dir), so building the same definition again downloads nothing. With\n" +
			"--registry-override images are pulled through a mirror and keep their original names.",
		Example: "  cargoship create example/k3s/v1.35.3-k3s1 -o build/\n" +
			"  cargoship create distro.yaml -o build/ --architecture amd64,arm64 --signing-key cargoship.key\n" +
			"  cargoship create distro.yaml -o build/ --registry-override docker.io=mirror.internal:5000",
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
	f.StringSliceVarP(&fl.arches, "architecture", "a", nil, "architectures to build, comma separated (default: settings architecture, else the definition's, else this machine's)")
	f.StringVar(&fl.signingKey, "signing-key", "", "ed25519 private key (PEM) to sign the package with; see cargoship keygen")
	f.IntVar(&fl.concurrency, "concurrency", 0, "parallel downloads and image pulls (default: settings distro.oci_concurrency, else 4)")
	f.BoolVar(&fl.insecure, "insecure-registry", false, "allow registries served over plain HTTP (local mirrors)")
	f.StringArrayVar(&fl.registryOverrides, "registry-override", nil, "pull images of a registry through a mirror, REGISTRY=MIRROR (docker.io=mirror.internal:5000); repeatable; the package keeps the original names (default: settings distro.create.registry_override)")
	f.BoolVar(&fl.skipSBOM, "skip-sbom", false, "write no SBOM into the package (default: settings distro.create.skip_sbom)")
	return cmd
}

func runCreate(cmd *cobra.Command, app *App, def string, fl createFlags) error {
	opts := pkgfile.CreateOptions{
		Definition:       def,
		OutputDir:        app.Settings.Output,
		Concurrency:      fl.concurrency,
		InsecureRegistry: fl.insecure,
		SkipSBOM:         app.Settings.SkipSBOM,
		CacheDir:         app.Settings.CacheDir,
		TmpDir:           app.Settings.TmpDir,
		Log:              app.Log,
		ActionOutput:     app.Err,
	}
	if cmd.Flags().Changed("output") {
		opts.OutputDir = fl.output
	}
	if cmd.Flags().Changed("skip-sbom") {
		opts.SkipSBOM = fl.skipSBOM
	}
	opts.Architectures = createArches(app, cmd, fl)
	var err error
	if opts.RegistryOverrides, err = createRegistryOverrides(app, cmd, fl); err != nil {
		return err
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
	app.logSettingsWarnings()
	display := fetch.NewProgress(app.Err, app.colorOn(cmd, app.Err))
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

// createArches is --architecture, else the architecture setting (which,
// like the flag, replaces the definition's), else nil: the definition's,
// else this machine's.
func createArches(app *App, cmd *cobra.Command, fl createFlags) []string {
	if cmd.Flags().Changed("architecture") {
		return fl.arches
	}
	if a := app.Settings.Architecture; a != "" {
		app.Log.Info("building for the settings file's architecture", "architecture", a, "settings", app.Settings.File)
		return []string{a}
	}
	return nil
}

// createRegistryOverrides is --registry-override when given (it replaces
// the setting's list, as every flag wins over its setting), else
// distro.create.registry_override; a bad item is an error naming where it
// was given.
func createRegistryOverrides(app *App, cmd *cobra.Command, fl createFlags) ([]image.RegistryOverride, error) {
	if cmd.Flags().Changed("registry-override") {
		ovs, err := image.ParseRegistryOverrides(fl.registryOverrides)
		if err != nil {
			return nil, fmt.Errorf("--registry-override %w", err)
		}
		return ovs, nil
	}
	ovs, err := image.ParseRegistryOverrides(app.Settings.RegistryOverrides)
	if err != nil {
		return nil, fmt.Errorf("settings file %s: distro.create.registry_override: %w", app.Settings.File, err)
	}
	return ovs, nil
}
