package phase

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// profileRolePrefix and profileRoleValue make a host's profile its node's
// role label: node-role.kubernetes.io/<profile>=true.
const (
	profileRolePrefix = "node-role.kubernetes.io/"
	profileRoleValue  = "true"
)

// LabelNodes brings each node's inventory labels and taints to what the
// inventory gives, through the API: the engines apply node-label and
// node-taint only when a node registers (docs/reference/engines.md 3.4).
// With --label-nodes it also labels each node with its host's profile,
// where the label is missing or holds anything but "true".
type LabelNodes struct {
	base
	todo []nodeLabel
	meta []nodeMetadata
}

// nodeLabel is one label to set on one node.
type nodeLabel struct {
	host       *node.Host
	node, key  string
	have       string // the value the node holds now
	registered bool   // false: the node has not joined yet (a dry run)
	present    bool   // the node holds the key at all
}

// Title implements Phase.
func (p *LabelNodes) Title() string { return "Labeling nodes with their profile group" }

// Prepare implements Preparer: it reads the cluster's nodes and keeps the
// labels and taints that need setting or removing.
func (p *LabelNodes) Prepare(ctx context.Context) error {
	s := p.state
	p.todo, p.meta = nil, nil
	if s.KubectlHost() == nil {
		switch {
		case !s.Options.LabelNodes:
			// Nodes not running yet register with their inventory
			// labels and taints: nothing to reconcile.
			return nil
		case s.Options.DryRun:
			return ErrUnassessed
		}
		return fmt.Errorf("no controller runs %s: there is no cluster to label", s.Engine.Name())
	}
	nodes, err := s.ClusterNodes(ctx)
	if err != nil {
		return err
	}
	if p.meta, err = metadataChanges(s, nodes); err != nil {
		return err
	}
	if s.Options.LabelNodes {
		p.todo = profileLabels(s.Hosts, nodes)
	}
	if s.Options.DryRun {
		return nil
	}
	var missing []string
	for _, l := range p.todo {
		if !l.registered {
			missing = append(missing, l.node)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("node(s) %s are not in the cluster: the engine phases should have joined them", strings.Join(missing, ", "))
	}
	return nil
}

// profileLabels are the role labels hosts' nodes lack, in inventory order.
func profileLabels(hosts node.Hosts, nodes []node.Node) []nodeLabel {
	byName := make(map[string]*node.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var out []nodeLabel
	for _, h := range hosts {
		if h.Spec.Profile == "" {
			continue
		}
		l := nodeLabel{host: h, node: h.NodeName(), key: profileRolePrefix + h.Spec.Profile}
		if n := byName[l.node]; n != nil {
			l.registered = true
			l.have, l.present = n.Labels[l.key]
		}
		if l.present && l.have == profileRoleValue {
			continue
		}
		out = append(out, l)
	}
	return out
}

// ShouldRun implements Conditional.
func (p *LabelNodes) ShouldRun() bool { return len(p.todo) > 0 || len(p.meta) > 0 }

// Plan implements Planner.
func (p *LabelNodes) Plan(context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, m := range p.meta {
		for _, what := range m.describe(false) {
			out = append(out, node.Change{Host: m.host.String(), What: what})
		}
	}
	for _, l := range p.todo {
		out = append(out, node.Change{Host: l.host.String(), What: l.describe("label")})
	}
	return out, nil
}

// Run implements Phase.
func (p *LabelNodes) Run(ctx context.Context) error {
	s := p.state
	for _, m := range p.meta {
		for _, args := range m.commands() {
			if _, err := s.Kubectl(ctx, args...); err != nil {
				return fmt.Errorf("%s: %s node %s: %w", m.host, args[0], m.node, err)
			}
		}
		for _, what := range m.describe(true) {
			s.Report.Add(node.Change{Host: m.host.String(), Phase: p.Title(), What: what})
		}
	}
	for _, l := range p.todo {
		if _, err := s.Kubectl(ctx, "label", "node", l.node, l.key+"="+profileRoleValue, "--overwrite"); err != nil {
			return fmt.Errorf("%s: labelling node %s: %w", l.host, l.node, err)
		}
		s.Report.Add(node.Change{Host: l.host.String(), Phase: p.Title(), What: l.describe("labelled")})
	}
	return nil
}

// describe says what setting the label does, and what it replaces.
func (l nodeLabel) describe(verb string) string {
	msg := fmt.Sprintf("%s node %s %s=%s", verb, l.node, l.key, profileRoleValue)
	switch {
	case !l.registered:
		msg += " once it joins"
	case l.present:
		msg += " (was " + strconv.Quote(l.have) + ")"
	}
	return msg
}
