package cli

import (
	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

func init() { extraCommands = append(extraCommands, newApplyCommand, newPrepareCommand) }

func newApplyCommand(app *App) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:     "apply PACKAGE --config CLUSTER.yaml (--confirm | --dry-run)",
		GroupID: groupInstall,
		Short:   "Install or upgrade the package's Kubernetes on every host of the inventory",
		Long: "apply verifies the package and the inventory, then walks the phase list of docs/apply.md over SSH on\n" +
			"every host: connect, check, prepare, upload, configure, start, join, upgrade. A second apply on a\n" +
			"converged cluster changes nothing. --dry-run connects and checks for real, then reports per host\n" +
			"what would change, and writes nothing. The report is printed on standard output when the run ends,\n" +
			"also after a failure: a summary, or with -o json one JSON document (schema/report.schema.json); logs\n" +
			"go to standard error. --detailed-exitcode exits 2 when something changed (or, with --dry-run, would)\n" +
			"and 0 when nothing did, as terraform plan -detailed-exitcode does; an error is 1.",
		Example: "  cargoship apply cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst --config cluster.yaml --dry-run\n" +
			"  cargoship apply cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst -c cluster.yaml --confirm -H -F\n" +
			"  # for scripts: the report as JSON, and exit 2 when the fleet would change\n" +
			"  cargoship apply cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst -c cluster.yaml --dry-run -o json --detailed-exitcode",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePackageArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd, app, &f, args[0], action.ApplyPhases())
		},
	}
	f.register(cmd, app)
	f.engine.register(cmd.Flags())
	return cmd
}

func newPrepareCommand(app *App) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:     "prepare PACKAGE --config CLUSTER.yaml (--confirm | --dry-run)",
		GroupID: groupInstall,
		Short:   "Run only the host preparation phases (an apply runs them too)",
		Long: "prepare verifies the package and the inventory like apply, then runs only the phases that get the\n" +
			"hosts ready: connect, check, prepare hosts (modules, swap, sysctls, /etc/environment), the Enterprise\n" +
			"Linux phases, /etc/hosts with -H and the firewall with -F, and the lock. It installs no engine, so\n" +
			"hosts can be made ready ahead of a maintenance window; an apply runs the same phases again and finds\n" +
			"nothing left to do. Its report, -o json and --detailed-exitcode are apply's.",
		Example: "  cargoship prepare cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst -c cluster.yaml --dry-run\n" +
			"  cargoship prepare cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst -c cluster.yaml --confirm -H -F -o json",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePackageArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd, app, &f, args[0], action.PreparePhases())
		},
	}
	f.register(cmd, app)
	return cmd
}

// runInstall loads and verifies everything, walks the phases, and prints
// the report, also after a failure: what did change matters most then.
func runInstall(cmd *cobra.Command, app *App, f *installFlags, pkgPath string, phases []phase.Phase) error {
	o, err := f.options(cmd, app, pkgPath)
	if err != nil {
		return err
	}
	loaded, err := action.Load(cmd.Context(), o)
	if err != nil {
		return err
	}
	defer func() {
		// Close only removes the package's extracted temp directory; the
		// run's outcome is what the command reports.
		_ = loaded.Close()
	}()
	ctx := node.WithProgress(cmd.Context(), uploadProgress(cmd, app, o.Log))
	runErr := action.Run(ctx, loaded, phases)
	return f.output.finish(app.Out, cmd.Name(), loaded.State, runErr)
}
