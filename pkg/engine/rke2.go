package engine

import (
	"fmt"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// newRKE2 is rke2 (docs/reference/engines.md 1.2): binaries from the tarball
// under /usr/local (or /opt/rke2 where /usr/local is read-only) or from RPMs
// in /usr/bin; services rke2-server and rke2-agent; the supervisor on 9345.
func newRKE2() *rancher {
	return &rancher{
		name:              v1alpha1.EngineRKE2,
		joinPort:          9345,
		binDirs:           []string{"/usr/local/bin", "/usr/bin", "/opt/rke2/bin"},
		kubectl:           []string{"/var/lib/rancher/rke2/bin/kubectl"},
		serverUnit:        "rke2-server",
		agentUnit:         "rke2-agent",
		agentUninstall:    "rke2-uninstall.sh",
		clusterInit:       false,
		apiserverFileKeys: true,
		// What rke2-uninstall.sh removes besides the engine's own
		// directories, less /etc/rancher/node
		// (docs/reference/behaviour.md, "Removing a host").
		cleanup: []string{
			"/etc/cni", "/opt/cni/bin", "/run/k3s", "/run/flannel", "/var/lib/cni",
			"/var/lib/kubelet", "/var/log/calico", "/var/log/containers", "/var/log/pods",
		},
		ports: rke2Ports,
	}
}

// rke2CNIPorts are each CNI's ports (docs/reference/engines.md 6, RD-REQ).
// Cilium's ICMP health checks are not ports; the firewall trusts peer nodes
// anyway.
var rke2CNIPorts = map[string][]v1alpha1.Port{
	"canal":   {udp("8472"), tcp("9099"), udp("51820"), udp("51821")},
	"cilium":  {tcp("4240"), udp("8472"), udp("51871")},
	"calico":  {tcp("179"), udp("4789"), tcp("5473"), tcp("9098"), tcp("9099")},
	"flannel": {udp("4789")},
	"none":    nil,
}

// rke2Ports is the rke2 inbound rules table
// (docs/reference/engines.md 6, RD-REQ).
func rke2Ports(controller bool, cfg map[string]any) ([]v1alpha1.Port, error) {
	ports := []v1alpha1.Port{tcp("10250"), tcp("30000-32767")}
	if controller {
		ports = append(ports, tcp("6443"), tcp("9345"), tcp("2379-2381"))
	}
	cni, err := rke2CNI(cfg["cni"])
	if err != nil {
		return nil, err
	}
	cniPorts, ok := rke2CNIPorts[cni]
	if !ok {
		return nil, fmt.Errorf("cni %q is not one rke2 ships (canal, cilium, calico, flannel, none)", cni)
	}
	ports = append(ports, cniPorts...)
	if truthy(cfg["embedded-registry"]) {
		ports = append(ports, tcp("5001"), tcp("9345"))
	}
	return ports, nil
}
