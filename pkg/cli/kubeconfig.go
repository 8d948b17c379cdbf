package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

func init() { extraCommands = append(extraCommands, newKubeConfigCommand) }

type kubeConfigOptions struct {
	config, distro, output string
}

func newKubeConfigCommand(app *App) *cobra.Command {
	var o kubeConfigOptions
	cmd := &cobra.Command{
		Use:     "kube-config --config CLUSTER.yaml --distro k3s|rke2|upstream [-o PATH]",
		GroupID: groupInstall,
		Short:   "Write the cluster's admin kubeconfig, pointed at the load balancer",
		Long: "kube-config connects to the inventory's controllers in order, reads the admin kubeconfig of the\n" +
			"first whose engine runs, points its server at https://<spec.config.loadbalancer>:<API port> and\n" +
			"writes it (0600) to PATH, by default ./kubeconfig-<cluster name>.yaml, or to stdout with -o -.\n" +
			"A file already current is left alone. It needs no package: --distro names the engine the\n" +
			"cluster runs (the package's spec.type), which says where the kubeconfig is.",
		Example: "  cargoship kube-config --config cluster.yaml --distro rke2\n" +
			"  cargoship kube-config -c cluster.yaml --distro k3s -o ~/.kube/config",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKubeConfig(cmd, app, o)
		},
	}
	fl := cmd.Flags()
	registerConfig(cmd, &o.config)
	fl.StringVar(&o.distro, "distro", "", "the engine the cluster runs: "+strings.Join(v1alpha1.Engines, ", ")+" (required)")
	_ = cmd.RegisterFlagCompletionFunc("distro", completeEngine) // the flag was just added
	fl.StringVarP(&o.output, "output", "o", "", "the file to write, or - for stdout (default ./kubeconfig-<cluster name>.yaml)")
	return cmd
}

// check refuses missing or unknown flags before any document is read.
func (o kubeConfigOptions) check() error {
	if err := checkConfig(o.config, "the cluster inventory whose controllers hold the kubeconfig"); err != nil {
		return err
	}
	switch {
	case o.distro == "":
		return fmt.Errorf("--distro is required: the engine the cluster runs, one of %s", strings.Join(v1alpha1.Engines, ", "))
	case !slices.Contains(v1alpha1.Engines, o.distro):
		return fmt.Errorf("--distro %q is not one of %s", o.distro, strings.Join(v1alpha1.Engines, ", "))
	}
	return nil
}

func runKubeConfig(cmd *cobra.Command, app *App, o kubeConfigOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	ctx, cancel := app.timeoutContext(cmd, false)
	defer cancel()
	return action.KubeConfig(ctx, action.KubeConfigOptions{
		ClusterPath: o.config, Engine: o.distro, Output: o.output, Stdout: app.Out,
		Connect: host.ConnectOptions{Log: app.Log, LookupEnv: app.LookupEnv}, Log: app.Log,
	})
}
