package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// ClusterKubeconfig connects to the inventory's controllers in order and
// returns the admin kubeconfig of the first whose engine runs, pointed at
// the load balancer: what `cargoship kube-config` writes.
func ClusterKubeconfig(ctx context.Context, c *v1alpha1.Cluster, e engine.Engine, opts host.ConnectOptions) ([]byte, error) {
	var tried []string
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		if !h.IsController() {
			continue
		}
		data, err := controllerKubeconfig(ctx, h, e, c.Spec.Config.Loadbalancer, opts)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tried = append(tried, fmt.Sprintf("%s: %v", h.Name(), err))
	}
	if len(tried) == 0 {
		return nil, errors.New("the inventory has no controller")
	}
	return nil, fmt.Errorf("no controller gave its admin kubeconfig:\n - %s", strings.Join(tried, "\n - "))
}

// controllerKubeconfig reads one controller's admin kubeconfig when its
// engine runs.
func controllerKubeconfig(ctx context.Context, h *v1alpha1.Host, e engine.Engine, loadbalancer string, opts host.ConnectOptions) ([]byte, error) {
	conn, err := host.Connect(ctx, h, opts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	unit := e.Service(true)
	state, _ := conn.Sudo(ctx, shell.Join("systemctl", "is-active", unit))
	if strings.TrimSpace(state) != "active" {
		return nil, fmt.Errorf("%s does not run", unit)
	}
	return node.FetchKubeconfig(ctx, conn, e, loadbalancer)
}

// KubeConfigOptions are what `cargoship kube-config` acts on.
type KubeConfigOptions struct {
	ClusterPath string
	// Engine is the engine the cluster runs: k3s, rke2 or upstream.
	Engine string
	// Output is the file to write; "" is ./kubeconfig-<cluster name>.yaml
	// and "-" writes to Stdout.
	Output  string
	Stdout  io.Writer
	Connect host.ConnectOptions
	Log     *slog.Logger
}

// KubeConfig writes the cluster's admin kubeconfig, pointed at the load
// balancer; a file already current is left alone.
func KubeConfig(ctx context.Context, o KubeConfigOptions) error {
	cluster, findings, err := v1alpha1.LoadClusterFile(o.ClusterPath)
	if err != nil {
		return err
	}
	for _, f := range findings.Warnings() {
		o.Log.Warn(f.String())
	}
	eng, err := engine.For(o.Engine)
	if err != nil {
		return err
	}
	data, err := ClusterKubeconfig(ctx, cluster, eng, o.Connect)
	if err != nil {
		return err
	}
	if o.Output == "-" {
		_, err := o.Stdout.Write(data)
		return err
	}
	out := o.Output
	if out == "" {
		out = "kubeconfig-" + cluster.Metadata.Name + ".yaml"
	}
	changed, err := node.WriteLocalFile(out, data, node.KubeconfigMode)
	if err != nil {
		return err
	}
	if changed {
		o.Log.Info("wrote the admin kubeconfig", "path", out)
	} else {
		o.Log.Info("the admin kubeconfig is already current", "path", out)
	}
	return nil
}
