package podnet

import (
	"encoding/json"
	"fmt"
	"net/netip"
)

const (
	// ConflistName is the file podnet writes in the CNI configuration
	// directory. The container runtime loads the first file there by
	// name, so nothing else should sort before it.
	ConflistName = "10-podnet.conflist"
	// NetworkName is the CNI network's name (the conflist's "name").
	NetworkName = "podnet"
	// BridgeName is the bridge the pods on a node are plugged into.
	BridgeName = "cni0"
	// CNIVersion is the CNI spec version of the conflist.
	CNIVersion = "1.0.0"
)

// The conflist's shape; field order is the order written.
type (
	conflist struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}
	bridgePlugin struct {
		Type        string    `json:"type"`
		Bridge      string    `json:"bridge"`
		IsGateway   bool      `json:"isGateway"`
		IPMasq      bool      `json:"ipMasq"`
		HairpinMode bool      `json:"hairpinMode"`
		IPAM        hostLocal `json:"ipam"`
	}
	hostLocal struct {
		Type   string       `json:"type"`
		Ranges [][]ipRange  `json:"ranges"`
		Routes []routeEntry `json:"routes"`
	}
	ipRange struct {
		Subnet string `json:"subnet"`
	}
	routeEntry struct {
		Dst string `json:"dst"`
	}
	portmapPlugin struct {
		Type         string          `json:"type"`
		Capabilities map[string]bool `json:"capabilities"`
	}
)

// Conflist renders the CNI network configuration list for a node whose
// pod subnet is podCIDR: the bridge plugin on cni0 as the pods' gateway
// (the subnet's first address, which host-local hands the bridge), with
// masquerading of traffic leaving the subnet and hairpin mode (a pod can
// reach itself through a Service), host-local allocating from podCIDR
// with a default route in each pod, then portmap for hostPort. The
// loopback plugin is not listed: the runtime brings up lo on its own.
func Conflist(podCIDR netip.Prefix) ([]byte, error) {
	if !podCIDR.IsValid() || !podCIDR.Addr().Is4() {
		return nil, fmt.Errorf("conflist: pod CIDR %s is not an IPv4 prefix", podCIDR)
	}
	if podCIDR.Bits() > 30 {
		return nil, fmt.Errorf("conflist: pod CIDR %s leaves no room for a gateway and a pod", podCIDR)
	}
	c := conflist{
		CNIVersion: CNIVersion,
		Name:       NetworkName,
		Plugins: []any{
			bridgePlugin{
				Type:        "bridge",
				Bridge:      BridgeName,
				IsGateway:   true,
				IPMasq:      true,
				HairpinMode: true,
				IPAM: hostLocal{
					Type:   "host-local",
					Ranges: [][]ipRange{{{Subnet: podCIDR.Masked().String()}}},
					Routes: []routeEntry{{Dst: "0.0.0.0/0"}},
				},
			},
			portmapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("conflist: %w", err)
	}
	return append(b, '\n'), nil
}
