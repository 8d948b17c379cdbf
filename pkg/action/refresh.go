package action

import (
	"context"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// Status is what the hosts say about the cluster right now.
type Status struct {
	// Engine is the engine the hosts run (the package's, or the one found).
	Engine string
	// Hosts are the inventory's hosts by node name.
	Hosts map[string]HostStatus
	// Nodes are the cluster's nodes as a running controller lists them;
	// nil when no controller runs the engine.
	Nodes []node.Node
}

// HostStatus is one host's engine.
type HostStatus struct {
	// Version is the engine version installed, "" for none.
	Version string
	Running bool
}

// Refresh reads every host's engine and the cluster's nodes, and changes
// nothing: the provider's Read, and a way to tell drift from a plan. It
// runs apply's read-only preflight (connect, OS, facts, engine) as a dry
// run, whatever the options say.
func Refresh(ctx context.Context, l *Loaded) (*Status, error) {
	st := l.State
	st.Options.DryRun = true
	connect := &phase.Connect{}
	read := []phase.Phase{connect, &phase.DetectOS{}, &phase.GatherFacts{}, &phase.DistroFacts{AnyVersion: true}}
	defer func() {
		_ = (&phase.Manager{Phases: []phase.Phase{&phase.Disconnect{Connect: connect}}, State: st}).Run(context.WithoutCancel(ctx))
	}()
	if err := (&phase.Manager{Phases: read, State: st}).Run(ctx); err != nil {
		return nil, err
	}
	s := &Status{Engine: st.Engine.Name(), Hosts: map[string]HostStatus{}}
	for _, h := range st.Hosts {
		s.Hosts[h.NodeName()] = HostStatus{Version: h.EngineVersion, Running: h.EngineRunning}
	}
	if st.KubectlHost() != nil {
		nodes, err := st.ClusterNodes(ctx)
		if err != nil {
			return nil, err
		}
		s.Nodes = nodes
	}
	return s, nil
}
