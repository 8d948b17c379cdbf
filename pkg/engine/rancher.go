package engine

import (
	"fmt"
	"net"
	"path"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// rancher is what k3s and rke2 share: one config file format, one token
// scheme, one layout under /etc/rancher/<name> and /var/lib/rancher/<name>.
// k3s.go and rke2.go fill in where they differ.
type rancher struct {
	name     string
	joinPort int
	// binDirs are where install routes put the binary and its scripts,
	// preferred first.
	binDirs []string
	// kubectl is the argv prefix of the engine's kubectl at a fixed
	// path; kubectlSub, when set instead, is the engine binary's own
	// kubectl subcommand, run from whichever of binDirs holds it.
	kubectl    []string
	kubectlSub string
	// serverUnit and agentUnit are the systemd services.
	serverUnit, agentUnit string
	// agentUninstall is the uninstall script's name on workers.
	agentUninstall string
	// clusterInit: the founder gets cluster-init (k3s; rke2 has no such
	// flag and always runs embedded etcd).
	clusterInit bool
	// apiserverFileKeys: audit-policy-file and
	// pod-security-admission-config-file are config keys (rke2); k3s has
	// none and takes them as kube-apiserver-arg.
	apiserverFileKeys bool
	// cleanup are the directories a reset removes besides the engine's
	// own two under /etc/rancher and /var/lib/rancher.
	cleanup []string
	ports   func(controller bool, cfg map[string]any) ([]v1alpha1.Port, error)
}

const (
	apiPort            = 6443
	defaultPodCIDR     = "10.42.0.0/16"
	defaultServiceCIDR = "10.43.0.0/16"
)

func (r *rancher) etcDir() string  { return "/etc/rancher/" + r.name }
func (r *rancher) dataDir() string { return "/var/lib/rancher/" + r.name }

// Name implements Engine.
func (r *rancher) Name() string { return r.name }

// Paths implements Engine.
func (r *rancher) Paths() Paths {
	etc, data, bin := r.etcDir(), r.dataDir(), r.binDirs[0]
	return Paths{
		Binary:         path.Join(bin, r.name),
		Config:         path.Join(etc, "config.yaml"),
		DataDir:        data,
		TokenFile:      path.Join(etc, "token"),
		AgentTokenFile: path.Join(etc, "agent-token"),
		Kubeconfig:     path.Join(etc, r.name+".yaml"),
		ImagesDir:      v1alpha1.DefaultImagesDir(r.name),
		Registries:     path.Join(etc, "registries.yaml"),
		AuditPolicy:    path.Join(etc, "audit-policy.yaml"),
		PodSecurity:    path.Join(etc, "pod-security.yaml"),
		KubeletConfig:  path.Join(etc, "kubelet.conf"),
		ManifestsDir:   path.Join(data, "server", "manifests"),
		CACert:         path.Join(data, "server", "tls", "server-ca.crt"),
		Killall:        path.Join(bin, r.name+"-killall.sh"),
		Uninstall:      path.Join(bin, r.name+"-uninstall.sh"),
		AgentUninstall: path.Join(bin, r.agentUninstall),
	}
}

// Services implements Engine: the engine is one service.
func (r *rancher) Services(controller bool) []string {
	return []string{r.Service(controller)}
}

// Service implements Engine.
func (r *rancher) Service(controller bool) string {
	if controller {
		return r.serverUnit
	}
	return r.agentUnit
}

// APIPort implements Engine.
func (r *rancher) APIPort() int { return apiPort }

// JoinPort implements Engine.
func (r *rancher) JoinPort() int { return r.joinPort }

// Ports implements Engine.
func (r *rancher) Ports(controller bool, cfg map[string]any) ([]v1alpha1.Port, error) {
	ports, err := r.ports(controller, cfg)
	return sortPorts(ports), err
}

// Network implements Engine: cluster-cidr and service-cidr, which may be
// dual-stack lists, default 10.42.0.0/16 and 10.43.0.0/16.
func (r *rancher) Network(cfg map[string]any) (Network, error) {
	n := Network{
		PodCIDRs:     splitList(cfg["cluster-cidr"]),
		ServiceCIDRs: splitList(cfg["service-cidr"]),
	}
	if len(n.PodCIDRs) == 0 {
		n.PodCIDRs = []string{defaultPodCIDR}
	}
	if len(n.ServiceCIDRs) == 0 {
		n.ServiceCIDRs = []string{defaultServiceCIDR}
	}
	return n, checkCIDRs(n)
}

func checkCIDRs(n Network) error {
	for _, c := range append(append([]string(nil), n.PodCIDRs...), n.ServiceCIDRs...) {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return fmt.Errorf("%q is not a CIDR", c)
		}
	}
	return nil
}

func (r *rancher) binaries(name string) []string {
	out := make([]string, len(r.binDirs))
	for i, d := range r.binDirs {
		out[i] = path.Join(d, name)
	}
	return out
}

// VersionCommand implements Engine.
func (r *rancher) VersionCommand() string {
	return firstInstalled(r.binaries(r.name), "--version")
}

// Kubectl implements Engine.
func (r *rancher) Kubectl(args ...string) string {
	env := []string{"env", "KUBECONFIG=" + r.Paths().Kubeconfig}
	if r.kubectlSub == "" {
		return shell.Join(append(append(env, r.kubectl...), args...)...)
	}
	bins := r.binaries(r.name)
	missing := shell.Join("echo", r.name+" is in none of "+strings.Join(r.binDirs, ", ")) + " >&2; exit 127"
	return firstInstalledElse(bins, missing, func(bin string) []string {
		return append(append(append(env, bin), r.kubectlSub), args...)
	})
}

// StartCommand implements Engine.
func (r *rancher) StartCommand(controller bool) string {
	return systemctl([]string{"start", "--no-block"}, r.Services(controller)...)
}

// StopCommand implements Engine.
func (r *rancher) StopCommand(controller bool) string {
	return systemctl([]string{"stop"}, r.Service(controller))
}

// EnableCommand implements Engine.
func (r *rancher) EnableCommand(controller bool) string {
	return systemctl([]string{"enable"}, r.Services(controller)...)
}

// KillallCommand implements Engine.
func (r *rancher) KillallCommand() string {
	return firstInstalled(r.binaries(r.name + "-killall.sh"))
}

// CleanupPaths implements Engine: /etc/rancher/<name> and
// /var/lib/rancher/<name>, never /etc/rancher, /var/lib/rancher or
// /etc/rancher/node (the node password is not cargoship's to remove).
func (r *rancher) CleanupPaths() []string {
	return sortedUnique(append([]string{r.etcDir(), r.dataDir()}, r.cleanup...))
}

// ServerTokenPath implements Engine: the token the founder writes, in the
// secure K10<ca-hash>::server:<password> form that lets joining nodes pin
// the cluster CA.
func (r *rancher) ServerTokenPath() string {
	return path.Join(r.dataDir(), "server", "token")
}

// JoinTokenCommand implements Engine.
func (r *rancher) JoinTokenCommand() string {
	return shell.Join("cat", r.ServerTokenPath())
}

// ImportsImagesDirByItself implements Engine: k3s and rke2 import every
// archive in agent/images at start and when one changes.
func (r *rancher) ImportsImagesDirByItself() bool { return true }

// ImportImagesCommand implements Engine: nothing to run.
func (r *rancher) ImportImagesCommand(string) string { return "" }
