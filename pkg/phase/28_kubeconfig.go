package phase

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// localHost names the machine cargoship runs on in the report.
const localHost = "(local)"

// Kubeconfig writes the cluster's admin kubeconfig, pointed at the load
// balancer, to node.Options.KubeconfigOut on the machine cargoship runs on.
type Kubeconfig struct {
	base
	data []byte // what to write; nil when the file is already current
}

// Title implements Phase.
func (p *Kubeconfig) Title() string { return "Updating kubeconfig file with the current cluster" }

// Prepare implements Preparer: it reads the leader's admin kubeconfig and
// compares it with the local file. Both are reads.
func (p *Kubeconfig) Prepare(ctx context.Context) error {
	s := p.state
	p.data = nil
	out := s.Options.KubeconfigOut
	if out == "" {
		return nil
	}
	h := s.KubectlHost()
	if h == nil {
		if s.Options.DryRun {
			return ErrUnassessed
		}
		return fmt.Errorf("no controller runs %s: there is no admin kubeconfig to read", s.Engine.Name())
	}
	data, err := node.FetchKubeconfig(ctx, h.Conn, s.Engine, s.Cluster.Spec.Config.Loadbalancer)
	if err != nil {
		return err
	}
	current, err := node.LocalFileCurrent(out, data, node.KubeconfigMode)
	if err != nil {
		return err
	}
	if !current {
		p.data = data
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *Kubeconfig) ShouldRun() bool { return p.data != nil }

// Plan implements Planner.
func (p *Kubeconfig) Plan(context.Context) ([]node.Change, error) {
	return []node.Change{{Host: localHost, What: p.what("write")}}, nil
}

// Run implements Phase.
func (p *Kubeconfig) Run(context.Context) error {
	changed, err := node.WriteLocalFile(p.state.Options.KubeconfigOut, p.data, node.KubeconfigMode)
	if err != nil {
		return err
	}
	if changed {
		p.state.Report.Add(node.Change{Host: localHost, Phase: p.Title(), What: p.what("wrote")})
	}
	return nil
}

func (p *Kubeconfig) what(verb string) string {
	s := p.state
	return fmt.Sprintf("%s the admin kubeconfig to %s (%04o), server %s", verb, s.Options.KubeconfigOut, node.KubeconfigMode,
		engine.ServerURL(s.Cluster.Spec.Config.Loadbalancer, s.Engine.APIPort()))
}
