package engine

import (
	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// newK3s is k3s (docs/reference/engines.md 1.1): one multicall binary
// in /usr/local/bin, services k3s and k3s-agent, supervisor and API
// sharing 6443.
func newK3s() *rancher {
	return &rancher{
		name:     v1alpha1.EngineK3s,
		joinPort: apiPort,
		binDirs:  []string{"/usr/local/bin", "/opt/bin"},
		// kubectl is the k3s binary's own subcommand, wherever the
		// binary was installed (binDirs).
		kubectlSub:        "kubectl",
		serverUnit:        "k3s",
		agentUnit:         "k3s-agent",
		agentUninstall:    "k3s-agent-uninstall.sh",
		clusterInit:       true,
		apiserverFileKeys: false,
		// What k3s-uninstall.sh and k3s-killall.sh remove besides the
		// engine's own directories.
		cleanup: []string{"/run/k3s", "/run/flannel", "/var/lib/kubelet", "/var/lib/cni"},
		ports:   k3sPorts,
	}
}

// k3sPorts is the k3s inbound rules table
// (docs/reference/engines.md 6, KD-REQ).
func k3sPorts(controller bool, cfg map[string]any) ([]v1alpha1.Port, error) {
	ports := []v1alpha1.Port{tcp("10250")}
	if controller {
		// 6443 carries both the supervisor and the API; 2379-2380 is
		// embedded etcd, which every k3s cluster cargoship founds runs.
		ports = append(ports, tcp("6443"), tcp("2379-2380"))
	}
	switch firstString(cfg["flannel-backend"]) {
	case "", "vxlan":
		ports = append(ports, udp("8472"))
	case "wireguard-native":
		ports = append(ports, udp("51820"), udp("51821"))
	}
	if truthy(cfg["embedded-registry"]) {
		ports = append(ports, tcp("5001"), tcp("6443"))
	}
	return ports, nil
}
