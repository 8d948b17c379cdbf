package phase

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// RemovedNodes compares the nodes joined to the cluster with the inventory
// and stops the run when the cluster holds a node the inventory does not:
// nothing later in an apply removes a node, so the operator must decide.
type RemovedNodes struct {
	readOnly
	base
}

// Title implements Phase.
func (p *RemovedNodes) Title() string { return "Checking for nodes no longer in the config" }

// ShouldRun implements Conditional: with no running controller there is no
// cluster to ask.
func (p *RemovedNodes) ShouldRun() bool {
	if p.state.KubectlHost() == nil {
		p.state.Report.Note("no controller runs %s yet: no cluster to compare the inventory with", p.state.Engine.Name())
		return false
	}
	return true
}

// Run implements Phase.
func (p *RemovedNodes) Run(ctx context.Context) error {
	s := p.state
	nodes, err := s.ClusterNodes(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, h := range s.Hosts {
		known[h.NodeName()] = true
	}
	var extra []string
	for _, n := range nodes {
		if !known[n.Name] {
			extra = append(extra, n.Name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		return fmt.Errorf("the cluster holds node(s) %s that the inventory does not: to take them out, list them in the inventory again and run `cargoship reset --config <inventory> --target-hosts %s`, then apply without them; to keep them, add them back to the inventory",
			strings.Join(extra, ", "), strings.Join(extra, ","))
	}
	s.Logger().Info("every cluster node is in the inventory", "nodes", len(nodes))
	return nil
}
