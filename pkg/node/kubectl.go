package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/engine"
)

// Leader is the controller the cluster is founded or driven through: the
// running controller whose config joins through no other (the first
// server), else the first running controller, else the inventory's first
// controller. A controller that rejoins, even one listed first, joins
// through the leader and does not take the role back.
func (s *Fleet) Leader() *Host {
	var running *Host
	for _, h := range s.staying(s.Hosts.Controllers()) {
		if !h.EngineRunning || h.Conn == nil {
			continue
		}
		if h.JoinsThrough == "" {
			return h
		}
		if running == nil {
			running = h
		}
	}
	if running != nil {
		return running
	}
	if cs := s.staying(s.Hosts.Controllers()); len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// Leave marks hosts a reset takes out: kubectl never runs through them
// and none of them leads.
func (s *Fleet) Leave(hs Hosts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaving == nil {
		s.leaving = map[*Host]bool{}
	}
	for _, h := range hs {
		s.leaving[h] = true
	}
}

// staying is hs less the hosts that are leaving.
func (s *Fleet) staying(hs Hosts) Hosts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hs.Filter(func(h *Host) bool { return !s.leaving[h] })
}

// ColdBootstrap says no controller runs the engine yet: the leader founds
// the cluster and everyone joins through it.
func (s *Fleet) ColdBootstrap() bool { return s.KubectlHost() == nil }

// Kubectl runs kubectl through the leader's engine (as root: the admin
// kubeconfig is root's). The token never reaches kubectl's arguments.
func (s *Fleet) Kubectl(ctx context.Context, args ...string) (string, error) {
	h := s.KubectlHost()
	if h == nil {
		return "", fmt.Errorf("no controller runs %s to drive kubectl through", s.Engine.Name())
	}
	what := strings.Join(args, " ")
	out, err := s.whileAPIAway(ctx, what, func(ctx context.Context) (string, error) {
		return h.Conn.Sudo(ctx, s.Engine.Kubectl(args...))
	})
	if err != nil {
		return "", fmt.Errorf("%s: kubectl %s: %w", h, what, err)
	}
	return out, nil
}

// node returns one cluster node by name, or nil when the cluster has none
// of that name.
func (s *Fleet) node(ctx context.Context, name string) (*Node, error) {
	nodes, err := s.ClusterNodes(ctx)
	return nodeNamed(nodes, name), err
}

// nodeOnce is node without the wait for an API server that is away: for
// callers that poll themselves.
func (s *Fleet) nodeOnce(ctx context.Context, name string) (*Node, error) {
	nodes, err := s.listNodes(ctx)
	return nodeNamed(nodes, name), err
}

func nodeNamed(nodes []Node, name string) *Node {
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
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
	Annotations    map[string]string
	Taints         []engine.Taint
}

// KubectlHost is the first controller whose engine runs: the one cargoship
// drives kubectl through.
// While a controller restarts, another one answers if there is one.
func (s *Fleet) KubectlHost() *Host {
	s.mu.Lock()
	down := s.restarting
	s.mu.Unlock()
	var fallback *Host
	for _, h := range s.staying(s.Hosts.Controllers()) {
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

// ClusterNodes lists the cluster's nodes through a running controller,
// waiting a while for an API server that is away (kubectl_retry.go).
func (s *Fleet) ClusterNodes(ctx context.Context) ([]Node, error) {
	var nodes []Node
	_, err := s.whileAPIAway(ctx, "get nodes", func(ctx context.Context) (string, error) {
		var err error
		nodes, err = s.listNodes(ctx)
		return "", err
	})
	return nodes, err
}

// listNodes lists the cluster's nodes once.
func (s *Fleet) listNodes(ctx context.Context) ([]Node, error) {
	h := s.KubectlHost()
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
				Name        string            `json:"name"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Unschedulable bool `json:"unschedulable"`
				Taints        []struct {
					Key    string `json:"key"`
					Value  string `json:"value"`
					Effect string `json:"effect"`
				} `json:"taints"`
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
		n := Node{Name: it.Metadata.Name, Labels: it.Metadata.Labels, Annotations: it.Metadata.Annotations,
			Unschedulable: it.Spec.Unschedulable, KubeletVersion: it.Status.NodeInfo.KubeletVersion}
		for _, t := range it.Spec.Taints {
			n.Taints = append(n.Taints, engine.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
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
