// Package daemon runs the test engine's server and agent: it writes the
// files the real engine writes, listens where it listens, joins the way it
// joins, and registers and heartbeats a Node for the host, so that
// cargoship, driving it exactly as it drives k3s or rke2, sees a cluster.
package daemon

import (
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
)

// Config is what a server or agent runs with: the flags and config.yaml
// keys the test engine acts on.
type Config struct {
	Flavor flavor.Flavor
	// Args are the command's arguments as parsed (config keys included),
	// for the node-args annotation.
	Args []string

	DataDir                    string
	Token, TokenFile           string
	AgentToken, AgentTokenFile string
	ServerURL                  string
	ClusterInit                bool

	NodeName                 string
	WithNodeID               bool
	NodeIPs, NodeExternalIPs []string
	NodeLabels, NodeTaints   []string

	KubeletArgs               []string
	KubeControllerManagerArgs []string
	KubeAPIServerArgs         []string
	AuditPolicyFile           string
	PodSecurityConfigFile     string

	TLSSANs                                   []string
	BindAddress                               string
	HTTPSListenPort                           int
	WriteKubeconfig                           string
	WriteKubeconfigMode, WriteKubeconfigGroup string
	DisableAgent                              bool
}

// componentArg is the value of name=value in a component's argument list
// (kubelet-arg, kube-controller-manager-arg ...), last one winning as on
// a real command line.
func componentArg(args []string, name string) (string, bool) {
	val, found := "", false
	for _, a := range args {
		k, v, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if k == name {
			val, found = v, true
		}
	}
	return val, found
}

// durationArg is a duration component argument, or def.
func durationArg(args []string, name string, def time.Duration) time.Duration {
	if v, ok := componentArg(args, name); ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return def
}
