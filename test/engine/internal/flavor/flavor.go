// Package flavor says how k3s and rke2 differ where cargoship can see it:
// names, paths, ports, units and environment variables
// (docs/reference/engines.md 1-6). Everything else in the test engine is
// shared, as the two engines share most of their code.
package flavor

import (
	"path"
	"strings"
)

// Flavor is one engine the test engine imitates.
type Flavor struct {
	// Name is the program name: k3s or rke2.
	Name string
	// EnvPrefix starts every environment variable the engine reads.
	EnvPrefix string
	// APIPort is the Kubernetes API port; SupervisorPort is where nodes
	// join. k3s serves both on 6443, rke2's supervisor is 9345.
	APIPort, SupervisorPort int
	// ServerUnit and AgentUnit are the systemd units the install creates.
	ServerUnit, AgentUnit string
	// EtcdAlways is rke2's rule that every server runs embedded etcd (it
	// has no cluster-init flag); k3s runs etcd only with cluster-init or
	// when it joined a server.
	EtcdAlways bool
	// CommitLen is how much of the commit --version prints.
	CommitLen int
}

// K3s is k3s.
var K3s = Flavor{
	Name: "k3s", EnvPrefix: "K3S_", APIPort: 6443, SupervisorPort: 6443,
	ServerUnit: "k3s", AgentUnit: "k3s-agent", CommitLen: 8,
}

// RKE2 is rke2.
var RKE2 = Flavor{
	Name: "rke2", EnvPrefix: "RKE2_", APIPort: 6443, SupervisorPort: 9345,
	ServerUnit: "rke2-server", AgentUnit: "rke2-agent", EtcdAlways: true, CommitLen: 40,
}

// ByName returns the flavour called name.
func ByName(name string) (Flavor, bool) {
	switch name {
	case "k3s":
		return K3s, true
	case "rke2":
		return RKE2, true
	}
	return Flavor{}, false
}

// FromProgram picks the flavour from the name the binary was run as:
// /usr/local/bin/rke2, k3s, k3s-agent. ok is false when the name says
// neither (kubectl, a test's temp name).
func FromProgram(argv0 string) (Flavor, bool) {
	base := path.Base(argv0)
	switch {
	case strings.HasPrefix(base, "rke2"):
		return RKE2, true
	case strings.HasPrefix(base, "k3s"):
		return K3s, true
	}
	return Flavor{}, false
}

// SplitSupervisor reports whether the supervisor has its own port.
func (f Flavor) SplitSupervisor() bool { return f.SupervisorPort != f.APIPort }

// ConfigDir is /etc/rancher/<engine>.
func (f Flavor) ConfigDir() string { return "/etc/rancher/" + f.Name }

// ConfigFile is the default config.yaml.
func (f Flavor) ConfigFile() string { return path.Join(f.ConfigDir(), "config.yaml") }

// Kubeconfig is the admin kubeconfig the server writes.
func (f Flavor) Kubeconfig() string { return path.Join(f.ConfigDir(), f.Name+".yaml") }

// DataDir is the default data directory.
func (f Flavor) DataDir() string { return "/var/lib/rancher/" + f.Name }

// NodeDir holds the node password both engines keep across reinstalls.
func (f Flavor) NodeDir() string { return "/etc/rancher/node" }

// Env is the engine's environment variable for suffix, e.g. K3S_TOKEN.
func (f Flavor) Env(suffix string) string { return f.EnvPrefix + suffix }

// SupervisorPath is the supervisor's API prefix, /v1-k3s or /v1-rke2.
func (f Flavor) SupervisorPath() string { return "/v1-" + f.Name }

// AnnotationPrefix prefixes the node annotations the engine writes.
func (f Flavor) AnnotationPrefix() string { return f.Name + ".io/" }

// HeaderPrefix prefixes the supervisor's request headers (K3s-Node-Name).
func (f Flavor) HeaderPrefix() string {
	if f.Name == "rke2" {
		return "RKE2-"
	}
	return "K3s-"
}
