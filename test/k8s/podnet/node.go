package podnet

import (
	"encoding/json"
	"fmt"
	"net/netip"
)

// Node is what podnet reads of a Kubernetes Node: its name, the IPv4 pod
// subnet kube-controller-manager gave it and its IPv4 InternalIP. A zero
// PodCIDR or InternalIP means the node has none (yet).
type Node struct {
	Name       string
	PodCIDR    netip.Prefix
	InternalIP netip.Addr
}

// nodeObject is the part of a v1 Node object podnet decodes.
type nodeObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		PodCIDR  string   `json:"podCIDR"`
		PodCIDRs []string `json:"podCIDRs"`
	} `json:"spec"`
	Status struct {
		Addresses []struct {
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"addresses"`
	} `json:"status"`
}

// nodeListObject is a v1 NodeList.
type nodeListObject struct {
	Kind  string       `json:"kind"`
	Items []nodeObject `json:"items"`
}

// ParseNode decodes a v1 Node object, as GET /api/v1/nodes/NAME answers.
func ParseNode(data []byte) (Node, error) {
	var o nodeObject
	if err := json.Unmarshal(data, &o); err != nil {
		return Node{}, fmt.Errorf("decode node: %w", err)
	}
	return o.node()
}

// ParseNodeList decodes a v1 NodeList, as GET /api/v1/nodes answers.
func ParseNodeList(data []byte) ([]Node, error) {
	var l nodeListObject
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("decode node list: %w", err)
	}
	if l.Kind != "NodeList" {
		return nil, fmt.Errorf("decode node list: kind is %q, not NodeList", l.Kind)
	}
	nodes := make([]Node, 0, len(l.Items))
	for _, o := range l.Items {
		n, err := o.node()
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// node keeps the first IPv4 pod CIDR (spec.podCIDRs, which holds
// spec.podCIDR first, or spec.podCIDR alone) and the first IPv4
// InternalIP. A malformed value is an error: the API server validates
// both, so it means the answer is not what podnet thinks it is.
func (o nodeObject) node() (Node, error) {
	n := Node{Name: o.Metadata.Name}
	if n.Name == "" {
		return Node{}, fmt.Errorf("decode node: no metadata.name")
	}
	cidrs := o.Spec.PodCIDRs
	if len(cidrs) == 0 && o.Spec.PodCIDR != "" {
		cidrs = []string{o.Spec.PodCIDR}
	}
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return Node{}, fmt.Errorf("node %s: pod CIDR: %w", n.Name, err)
		}
		if p.Addr().Is4() {
			n.PodCIDR = p.Masked()
			break
		}
	}
	for _, a := range o.Status.Addresses {
		if a.Type != "InternalIP" {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			return Node{}, fmt.Errorf("node %s: InternalIP: %w", n.Name, err)
		}
		if ip.Is4() {
			n.InternalIP = ip
			break
		}
	}
	return n, nil
}
