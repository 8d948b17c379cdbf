package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func init() { extraCommands = append(extraCommands, newResetCommand) }

type resetFlags struct {
	installFlags
	distro  string
	targets []string
}

func newResetCommand(app *App) *cobra.Command {
	var f resetFlags
	cmd := &cobra.Command{
		Use:     "reset --config CLUSTER.yaml [--distro k3s|rke2|upstream|PACKAGE] [--target-hosts NAME,...] (--confirm | --dry-run)",
		GroupID: groupInstall,
		Short:   "Take hosts out of the cluster, or the whole cluster down: drain, delete, uninstall",
		Long: "reset takes the hosts --target-hosts names out of the cluster: each node is drained and deleted through a\n" +
			"controller that stays, its engine stopped and uninstalled with everything cargoship set up on it, and the\n" +
			"hosts that stay forget it and, when it was the server they joined through, are repointed. Without\n" +
			"--target-hosts (or naming every host) the whole cluster is uninstalled, workers first. Keep the removed\n" +
			"hosts in the inventory for the run: reset needs them there. Rules that would break the cluster refuse\n" +
			"the run before any host changes (docs/reset.md). --dry-run lists what would be drained, deleted, stopped,\n" +
			"removed and rewritten on each host, and changes nothing. --distro names the engine the cluster runs, or a\n" +
			"package whose files are removed too; without it the engine is found on the hosts. The report is\n" +
			"apply's: a summary on standard output, or one JSON document with -o json, and --detailed-exitcode\n" +
			"exits 2 when anything was (or, with --dry-run, would be) taken out, 0 when nothing was.",
		Example: "  cargoship reset --config cluster.yaml --target-hosts kw1 --dry-run\n" +
			"  cargoship reset --config cluster.yaml --distro k3s --target-hosts kw1 --confirm\n" +
			"  cargoship reset -c cluster.yaml --distro cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst --confirm\n" +
			"  cargoship reset -c cluster.yaml --target-hosts kw1 --dry-run -o json --detailed-exitcode",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReset(cmd, app, &f)
		},
	}
	f.registerCommon(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.distro, "distro", "", "the engine the cluster runs ("+strings.Join(v1alpha1.Engines, ", ")+"), or its package (default: found on the hosts)")
	_ = cmd.RegisterFlagCompletionFunc("distro", completeEngineOrPackage) // the flag was just added
	fl.StringSliceVar(&f.targets, "target-hosts", nil, "the hosts to take out, by inventory hostname or address, comma-separated (default: every host)")
	return cmd
}

func runReset(cmd *cobra.Command, app *App, f *resetFlags) error {
	pkgPath, eng := f.distro, ""
	if slices.Contains(v1alpha1.Engines, f.distro) {
		pkgPath, eng = "", f.distro
	}
	o, err := f.options(cmd, app, pkgPath)
	if err != nil {
		return err
	}
	o.Engine = eng
	o.Phase.TargetHosts = f.targets
	loaded, err := action.Load(cmd.Context(), o)
	if err != nil {
		return err
	}
	defer func() { _ = loaded.Close() }()
	loaded.State.Report.Nothing = "no target holds anything the engine or cargoship put there"
	runErr := action.Run(cmd.Context(), loaded, action.ResetPhases())
	return f.output.finish(app.Out, cmd.Name(), loaded.State, runErr)
}
