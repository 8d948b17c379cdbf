package phase

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// RemovedNodes compares the nodes joined to the cluster with the inventory
// and stops the run when the cluster holds a node the inventory does not:
// nothing later in an apply removes a node, so the operator must decide.
type RemovedNodes struct {
	readOnly
	state *State
}

// Title implements Phase.
func (p *RemovedNodes) Title() string { return "Checking for nodes no longer in the config" }

// Prepare implements Preparer.
func (p *RemovedNodes) Prepare(_ context.Context, s *State) error {
	p.state = s
	return nil
}

// ShouldRun implements Conditional: with no running controller there is no
// cluster to ask.
func (p *RemovedNodes) ShouldRun() bool {
	if p.state.kubectlHost() == nil {
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
		return fmt.Errorf("the cluster holds node(s) %s that the inventory does not; drain and delete them (kubectl delete node) and uninstall their engine, or add them back to the inventory", strings.Join(extra, ", "))
	}
	s.logger().Info("every cluster node is in the inventory", "nodes", len(nodes))
	return nil
}

// Node is what cargoship reads of a cluster node.
type Node struct {
	Name           string
	Ready          bool
	Unschedulable  bool
	KubeletVersion string
	InternalIP     string
	Labels         map[string]string
}

// kubectlHost is the first controller whose engine runs: the one cargoship
// drives kubectl through.
// While a controller restarts, another one answers if there is one.
func (s *State) kubectlHost() *Host {
	s.mu.Lock()
	down := s.restarting
	s.mu.Unlock()
	var fallback *Host
	for _, h := range s.Hosts.Controllers() {
		if !h.EngineRunning || h.Conn == nil {
			continue
		}
		if h != down {
			return h
		}
		fallback = h
	}
	return fallback
}

// ClusterNodes lists the cluster's nodes through a running controller.
func (s *State) ClusterNodes(ctx context.Context) ([]Node, error) {
	h := s.kubectlHost()
	if h == nil {
		return nil, fmt.Errorf("no controller runs %s", s.Engine.Name())
	}
	out, err := h.Conn.Sudo(ctx, s.Engine.Kubectl("get", "nodes", "-o", "json"))
	if err != nil {
		return nil, fmt.Errorf("%s: listing nodes: %w", h, err)
	}
	return ParseNodes(out)
}

// ParseNodes reads `kubectl get nodes -o json`.
func ParseNodes(out string) ([]Node, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Unschedulable bool `json:"unschedulable"`
			} `json:"spec"`
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
				Addresses []struct {
					Type    string `json:"type"`
					Address string `json:"address"`
				} `json:"addresses"`
				NodeInfo struct {
					KubeletVersion string `json:"kubeletVersion"`
				} `json:"nodeInfo"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("reading kubectl's node list: %w", err)
	}
	nodes := make([]Node, 0, len(list.Items))
	for _, it := range list.Items {
		n := Node{Name: it.Metadata.Name, Labels: it.Metadata.Labels, Unschedulable: it.Spec.Unschedulable, KubeletVersion: it.Status.NodeInfo.KubeletVersion}
		for _, c := range it.Status.Conditions {
			if c.Type == "Ready" {
				n.Ready = c.Status == "True"
			}
		}
		for _, a := range it.Status.Addresses {
			if a.Type == "InternalIP" {
				n.InternalIP = a.Address
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}
