package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

type validateOptions struct {
	cluster string
	distros []string
	json    bool
	strict  bool
}

func newValidateCommand(app *App) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate [CLUSTER.yaml] [--distro DEFINITION]",
		Short: "Check a cluster inventory and distro definitions without touching any host",
		Long: "validate loads documents exactly as apply does and prints every problem at once, each\n" +
			"naming file:line:column and the field. It exits 1 on any error and 0 when there are only warnings\n" +
			"(with --strict, a warning is an error too).",
		Example:           "  cargoship validate cluster.yaml\n  cargoship validate cluster.yaml --distro example/k3s/distro.yaml\n  cargoship validate --strict cluster.yaml\n  cargoship validate --distro example/rke2",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeDocumentArg,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.cluster = args[0]
			}
			if o.cluster == "" && len(o.distros) == 0 {
				return errors.New("name a cluster document, a --distro definition, or both")
			}
			return runValidate(app, o)
		},
	}
	cmd.Flags().StringArrayVar(&o.distros, "distro", nil, "a distro definition (file, or a directory holding distro.yaml); repeatable")
	cmd.Flags().BoolVar(&o.json, "json", false, "print findings as JSON")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat every warning as an error (an even controller count, say)")
	return cmd
}

func runValidate(app *App, o validateOptions) error {
	var all v1alpha1.Findings
	var loadErrs []error
	record := func(f v1alpha1.Findings, err error) {
		all = append(all, f...)
		var de *v1alpha1.DocumentError
		if err != nil && !errors.As(err, &de) {
			loadErrs = append(loadErrs, err)
		}
	}
	clusterRead := false
	if o.cluster != "" {
		_, f, err := v1alpha1.LoadClusterFile(o.cluster)
		record(f, err)
		var de *v1alpha1.DocumentError
		clusterRead = err == nil || errors.As(err, &de)
	}
	for _, d := range o.distros {
		path := v1alpha1.DistroPath(d)
		ds, f, err := v1alpha1.LoadDistroFile(path)
		record(f, err)
		// The inventory against each definition, as apply checks it
		// against its package's (docs/validate.md, "With a distro").
		if ds != nil && clusterRead {
			record(v1alpha1.LoadClusterFileWithDistro(o.cluster, ds, path))
		}
	}
	if o.strict {
		all = all.Strict()
	}
	if o.json {
		enc := json.NewEncoder(app.Out)
		enc.SetIndent("", "  ")
		if all == nil {
			all = v1alpha1.Findings{}
		}
		if err := enc.Encode(all); err != nil {
			return err
		}
	} else {
		for _, f := range all {
			_, _ = fmt.Fprintln(app.Out, f.String())
		}
	}
	if len(loadErrs) > 0 {
		return errors.Join(loadErrs...)
	}
	if n := len(all.Errors()); n > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d error(s), %d warning(s)", n, len(all.Warnings()))}
	}
	if !o.json {
		_, _ = fmt.Fprintf(app.Out, "valid: %d warning(s)\n", len(all.Warnings()))
	}
	return nil
}
