package engine

import (
	"fmt"
	"io/fs"
	"sort"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Engine is one Kubernetes distribution as the phases see it.
type Engine interface {
	// Name is the distro spec.type this engine implements.
	Name() string
	// Paths are where the engine keeps its files on a host.
	Paths() Paths
	// Services are the systemd units a node runs, in start order.
	Services(controller bool) []string
	// Service is the unit whose state says whether the node runs.
	Service(controller bool) string
	// APIPort is the Kubernetes API server port.
	APIPort() int
	// JoinPort is where joining nodes register: 6443 for k3s (supervisor
	// and API share it), 9345 for the rke2 supervisor, 6443 for kubeadm.
	JoinPort() int
	// Ports are the inbound ports a node of the role listens on, for the
	// firewall. config is the node's HostConfig: the CNI, the flannel
	// backend and the embedded registry decide some of them.
	Ports(controller bool, config map[string]any) ([]v1alpha1.Port, error)
	// Network is the pod and service CIDRs an engine config gives the
	// cluster, with the engine's defaults where it sets none.
	Network(config map[string]any) (Network, error)
	// Render is every file one host needs, and the commands that bring
	// the node up the first time.
	Render(in RenderInput) (Rendered, error)

	// VersionCommand prints the installed version, in a form ParseVersion
	// reads, or prints nothing when the engine is not installed.
	VersionCommand() string
	// Kubectl runs kubectl with the admin kubeconfig on a controller.
	Kubectl(args ...string) string
	// StartCommand starts the node's services without waiting for them:
	// the units have no start timeout, so a node that cannot join would
	// block a waiting start for ever. Callers poll readiness instead.
	StartCommand(controller bool) string
	// StopCommand stops the node's main service.
	StopCommand(controller bool) string
	// EnableCommand enables the node's services at boot.
	EnableCommand(controller bool) string
	// KillallCommand stops every engine process and unmounts what it
	// mounted; it succeeds when the engine is not installed.
	KillallCommand() string
	// CleanupPaths are the directories a reset removes: the engine-owned
	// subdirectories, never their shared parents
	// (docs/reference/behaviour.md, "Removing a host").
	CleanupPaths() []string
	// Removal is everything a reset takes off a node for this engine.
	Removal() Removal
	// ServerTokenPath is the founder's token file to read after it
	// started, or "" when the engine has none (kubeadm).
	ServerTokenPath() string
	// JoinTokenCommand prints a token other nodes join with, on the leader.
	JoinTokenCommand() string
	// ImportsImagesDirByItself reports whether the engine imports image
	// archives from its images directory on its own (k3s, rke2).
	ImportsImagesDirByItself() bool
	// ImportImagesCommand imports one archive into the engine's image
	// store, or is "" when the engine imports by itself.
	ImportImagesCommand(archive string) string
}

// Paths are an engine's files on a host. Empty means the engine has none.
type Paths struct {
	// Binary is the engine binary (kubeadm for upstream).
	Binary string
	// Config is the engine config file cargoship writes.
	Config string
	// DataDir holds the engine's state.
	DataDir string
	// TokenFile and AgentTokenFile hold the join tokens cargoship writes
	// (0600) and the config names with token-file / agent-token-file.
	TokenFile      string
	AgentTokenFile string
	// Kubeconfig is the admin kubeconfig on controllers.
	Kubeconfig string
	// ImagesDir is where image archives are put for import.
	ImagesDir string
	// Registries is the registries.yaml file (k3s, rke2) or the
	// containerd hosts directory (upstream).
	Registries string
	// AuditPolicy and PodSecurity are the API server's audit policy and
	// admission configuration files.
	AuditPolicy string
	PodSecurity string
	// KubeletConfig is the profile's kubelet configuration: a file named by
	// kubelet-arg config= (k3s, rke2) or a kubeadm patch (upstream).
	KubeletConfig string
	// ManifestsDir is where the engine auto-applies manifests, so where
	// HelmChartConfig files for chart values go.
	ManifestsDir string
	// CACert is the cluster CA certificate on controllers.
	CACert string
	// Killall and the uninstall scripts are the engine's own clean-up
	// scripts, where the engine ships them.
	Killall        string
	Uninstall      string
	AgentUninstall string
}

// Network is the cluster's address ranges.
type Network struct {
	PodCIDRs     []string
	ServiceCIDRs []string
}

// File is one file Render wants on a host.
type File struct {
	Path    string
	Content []byte
	Mode    fs.FileMode
	// Secret files hold a token or a password: never log their content.
	Secret bool
}

// Rendered is what one host needs.
type Rendered struct {
	// Files sorted by path.
	Files []File
	// Start brings the node up the first time, in order.
	Start []string
}

// File returns the rendered file at path.
func (r Rendered) File(path string) (File, bool) {
	for _, f := range r.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// RenderInput is what Render needs to know about one host and its cluster.
type RenderInput struct {
	Cluster *v1alpha1.Cluster
	Distro  *v1alpha1.Distro
	// Host is the host to render for; the controllers named in tls-san
	// and certSANs are Cluster's controller-type hosts.
	Host *v1alpha1.Host
	// NodeName overrides Host.Hostname, e.g. with the hostname discovered
	// on a host whose inventory entry has none.
	NodeName string
	// Leader is the controller the cluster is founded through. Render
	// treats Host as the founder when it is the Leader: no server line,
	// cluster-init for k3s, kubeadm init for upstream.
	Leader *v1alpha1.Host
	// JoinAddress is the address every other node joins through; see
	// JoinAddress.
	JoinAddress string
	// Token is the cluster token: read from the founder's ServerTokenPath
	// (k3s, rke2) or made by JoinTokenCommand (kubeadm). The founder may
	// start without one; every other node needs it.
	Token string
	// AgentToken, when set, is the token workers join with (k3s, rke2).
	AgentToken string
	// CACertHash pins the cluster CA when a kubeadm node joins; see
	// CACertHash.
	CACertHash string
	// CertificateKey lets kubeadm controllers join with the founder's
	// uploaded certificates; see NewCertificateKey.
	CertificateKey string
	// RegistryPasswords are the passwords of cluster registries whose auth
	// names a passEnv, resolved by the caller, by registry name.
	RegistryPasswords map[string]string
	// ClusterExists says a controller already runs the engine: this render
	// is not the founding one (kubeadm's kube-vip static pod differs).
	ClusterExists bool
}

// For returns the engine for a distro spec.type.
func For(distroType string) (Engine, error) {
	switch distroType {
	case v1alpha1.EngineK3s:
		return newK3s(), nil
	case v1alpha1.EngineRKE2:
		return newRKE2(), nil
	case v1alpha1.EngineUpstream:
		return newUpstream(), nil
	}
	return nil, fmt.Errorf("engine %q is not supported; use one of %v", distroType, v1alpha1.Engines)
}

// sortFiles orders rendered files by path so output is stable.
func sortFiles(files []File) []File {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}
