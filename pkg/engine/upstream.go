package engine

import (
	"fmt"
	"path"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// upstream is kubeadm with containerd from distribution packages
// (docs/reference/engines.md 8): kubeadm, kubelet and kubectl in /usr/bin,
// the kubelet and containerd as services, the control plane as static pods.
type upstream struct{}

func newUpstream() *upstream { return &upstream{} }

// Paths of the upstream engine. The kubeadm config lives under
// /etc/cargoship because kubeadm reads it only at init and join, and
// /etc/kubernetes must be left to kubeadm (its preflight checks it).
const (
	kubeadmBin        = "/usr/bin/kubeadm"
	kubectlBin        = "/usr/bin/kubectl"
	kubeletBin        = "/usr/bin/kubelet"
	manifestsDir      = "/etc/kubernetes/manifests"
	ctrBin            = "/usr/bin/ctr"
	kubeadmConfig     = "/etc/cargoship/kubeadm.yaml"
	kubeadmPatches    = "/etc/cargoship/kubeadm-patches"
	apiserverFilesDir = "/etc/cargoship/apiserver"
	auditLogDir       = "/var/log/kubernetes/audit"
	adminConf         = "/etc/kubernetes/admin.conf"
	containerdConfig  = "/etc/containerd/config.toml"
	containerdHosts   = "/etc/containerd/certs.d"
	containerdSocket  = "unix:///run/containerd/containerd.sock"
	crictlConfig      = "/etc/crictl.yaml"
	kubeadmServiceNet = "10.96.0.0/12"
)

// Name implements Engine.
func (u *upstream) Name() string { return v1alpha1.EngineUpstream }

// Paths implements Engine.
func (u *upstream) Paths() Paths {
	return Paths{
		Binary:        kubeadmBin,
		Config:        kubeadmConfig,
		DataDir:       "/var/lib/kubelet",
		Kubeconfig:    adminConf,
		ImagesDir:     v1alpha1.DefaultImagesDir(v1alpha1.EngineUpstream),
		Registries:    containerdHosts,
		AuditPolicy:   path.Join(apiserverFilesDir, "audit-policy.yaml"),
		PodSecurity:   path.Join(apiserverFilesDir, "pod-security.yaml"),
		KubeletConfig: path.Join(kubeadmPatches, "kubeletconfiguration+merge.yaml"),
		CACert:        "/etc/kubernetes/pki/ca.crt",
	}
}

// Services implements Engine: containerd first, the kubelet needs it.
func (u *upstream) Services(bool) []string { return []string{"containerd", "kubelet"} }

// Service implements Engine.
func (u *upstream) Service(bool) string { return "kubelet" }

// APIPort implements Engine.
func (u *upstream) APIPort() int { return apiPort }

// JoinPort implements Engine: kubeadm has no supervisor; nodes discover
// the cluster through the API server.
func (u *upstream) JoinPort() int { return apiPort }

// Ports implements Engine (docs/reference/engines.md 6, KW-PORTS): every
// node also opens 10256, kube-proxy's health endpoint, which an external
// load balancer's health check dials. CNI ports are the CNI's own and not
// known here.
func (u *upstream) Ports(controller bool, _ map[string]any) ([]v1alpha1.Port, error) {
	if controller {
		return sortPorts([]v1alpha1.Port{
			tcp("6443"), tcp("2379-2380"), tcp("10250"), tcp("10256"), tcp("10257"), tcp("10259"),
		}), nil
	}
	return sortPorts([]v1alpha1.Port{tcp("10250"), tcp("10256"), tcp("30000-32767")}), nil
}

// Network implements Engine: clusterConfiguration.networking.podSubnet
// and serviceSubnet. kubeadm has no default pod subnet; the service subnet
// defaults to 10.96.0.0/12.
func (u *upstream) Network(cfg map[string]any) (Network, error) {
	cc, _ := cfg["clusterConfiguration"].(map[string]any)
	nw, _ := cc["networking"].(map[string]any)
	n := Network{
		PodCIDRs:     splitList(nw["podSubnet"]),
		ServiceCIDRs: splitList(nw["serviceSubnet"]),
	}
	if len(n.ServiceCIDRs) == 0 {
		n.ServiceCIDRs = []string{kubeadmServiceNet}
	}
	return n, checkCIDRs(n)
}

// VersionCommand implements Engine: the kubelet's version (Kubernetes
// v1.33.3), the node's own, which an upgrade changes last: kubeadm is
// upgraded first (docs/reference/engines.md 7.1), so a node whose upgrade
// stopped half way still reads as the older version and is upgraded again.
func (u *upstream) VersionCommand() string {
	return firstInstalled([]string{kubeletBin, "/usr/local/bin/kubelet"}, "--version")
}

// Kubectl implements Engine.
func (u *upstream) Kubectl(args ...string) string {
	return shell.Join(append([]string{kubectlBin, "--kubeconfig", adminConf}, args...)...)
}

// StartCommand implements Engine.
func (u *upstream) StartCommand(controller bool) string {
	return systemctl([]string{"start", "--no-block"}, u.Services(controller)...)
}

// StopCommand implements Engine: the kubelet only; containerd keeps the
// images and stopping it would kill every pod at once.
func (u *upstream) StopCommand(controller bool) string {
	return systemctl([]string{"stop"}, u.Service(controller))
}

// EnableCommand implements Engine.
func (u *upstream) EnableCommand(controller bool) string {
	return systemctl([]string{"enable"}, u.Services(controller)...)
}

// KillallCommand implements Engine: kubeadm reset stops the kubelet,
// removes the node's containers, static pods, certificates and etcd data.
func (u *upstream) KillallCommand() string {
	return firstInstalled([]string{kubeadmBin, "/usr/local/bin/kubeadm"}, "reset", "--force")
}

// CleanupPaths implements Engine. containerd's own state stays: the
// containerd package owns it.
func (u *upstream) CleanupPaths() []string {
	return sortedUnique([]string{
		"/etc/kubernetes", "/var/lib/etcd", "/var/lib/kubelet", "/etc/cni/net.d", "/var/lib/cni",
		kubeadmConfig, kubeadmPatches, apiserverFilesDir, containerdHosts,
	})
}

// ServerTokenPath implements Engine: kubeadm keeps no token file.
func (u *upstream) ServerTokenPath() string { return "" }

// JoinTokenCommand implements Engine: a fresh bootstrap token (24h).
func (u *upstream) JoinTokenCommand() string {
	return shell.Join(kubeadmBin, "token", "create", "--kubeconfig", adminConf)
}

// ManifestPodNetwork is an engine that brings no pod network of its own:
// its nodes get Ready only once a CNI is applied, which the package's
// manifests carry (phase 21). k3s and rke2 start theirs with the engine.
type ManifestPodNetwork interface {
	// PodNetworkFromManifests says the nodes wait for the manifests' CNI.
	PodNetworkFromManifests() bool
}

// PodNetworkFromManifests implements ManifestPodNetwork: kubeadm leaves
// the pod network to the user, and a node's kubelet reports NotReady
// ("cni plugin not initialized") until one is installed
// (docs/reference/engines.md 8).
func (u *upstream) PodNetworkFromManifests() bool { return true }

// ImportsImagesDirByItself implements Engine: containerd imports nothing
// by itself.
func (u *upstream) ImportsImagesDirByItself() bool { return false }

// ImportImagesCommand implements Engine: into the k8s.io namespace the
// CRI plugin uses (docs/reference/engines.md 8).
func (u *upstream) ImportImagesCommand(archive string) string {
	return shell.Join(ctrBin, "--namespace", "k8s.io", "images", "import", archive)
}

// CertUploader is an engine whose joining controllers need the founder's
// control-plane certificates uploaded first. kubeadm keeps the uploaded
// copy two hours, so a controller joining later needs a fresh upload.
type CertUploader interface {
	// UploadCertsCommand re-uploads the certificates on the founder,
	// encrypted with the certificate key its kubeadm config holds.
	UploadCertsCommand() string
}

// UploadCertsCommand implements CertUploader.
func (u *upstream) UploadCertsCommand() string {
	return shell.Join(kubeadmBin, "init", "phase", "upload-certs", "--upload-certs", "--config", kubeadmConfig)
}

// KubeadmUpgrader is an engine upgraded by kubeadm's own sequence rather
// than by swapping its files (docs/reference/engines.md 7.1, KW-UPG): the
// new kubeadm first, kubeadm upgrade apply on the first controller and
// kubeadm upgrade node on every other node, then, drained, the kubelet and
// kubectl and a kubelet restart.
type KubeadmUpgrader interface {
	// UpgradeFirst are the packages (and executables, by base name)
	// installed before kubeadm upgrade runs.
	UpgradeFirst() []string
	// UpgradeApplyCommand upgrades the cluster's control plane to v, on
	// the first controller, skipping the preflight checks named.
	UpgradeApplyCommand(v Version, ignorePreflight []string) string
	// UpgradeNodeCommand upgrades another controller's control plane and
	// any node's kubelet configuration.
	UpgradeNodeCommand(ignorePreflight []string) string
	// RestartKubeletCommand restarts the kubelet on its new binary.
	RestartKubeletCommand() string
	// ControlPlaneImagesCommand prints "<manifest> <image>" for each
	// control-plane static pod on a controller; ControlPlaneVersions
	// reads it.
	ControlPlaneImagesCommand() string
	// StaticPodManifestsCommand prints the name of each static pod
	// manifest the kubelet reads on a node, one per line.
	StaticPodManifestsCommand() string
}

// controlPlanePods are the static pods kubeadm upgrade moves to the new
// version on a controller (etcd has its own version line).
var controlPlanePods = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// UpgradeFirst implements KubeadmUpgrader.
func (u *upstream) UpgradeFirst() []string { return []string{"kubeadm"} }

// UpgradeApplyCommand implements KubeadmUpgrader. Offline: the version is
// named (kubeadm would otherwise ask dl.k8s.io for "stable"), and phase 18
// imported the new images, so kubeadm's preflight pulls nothing.
// Certificates are renewed and etcd upgraded (kubeadm's defaults, written
// out). The profile's kubelet patch is passed again when the host has it:
// kubeadm rewrites the kubelet's config from the cluster's.
func (u *upstream) UpgradeApplyCommand(v Version, ignorePreflight []string) string {
	return withPatches(append([]string{kubeadmBin, "upgrade", "apply", fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch),
		"--yes", "--certificate-renewal=true", "--etcd-upgrade=true"}, ignoreFlag(ignorePreflight)...)...)
}

// UpgradeNodeCommand implements KubeadmUpgrader.
func (u *upstream) UpgradeNodeCommand(ignorePreflight []string) string {
	return withPatches(append([]string{kubeadmBin, "upgrade", "node", "--certificate-renewal=true", "--etcd-upgrade=true"},
		ignoreFlag(ignorePreflight)...)...)
}

// ignoreFlag is kubeadm's --ignore-preflight-errors for a list of checks.
func ignoreFlag(checks []string) []string {
	if len(checks) == 0 {
		return nil
	}
	return []string{"--ignore-preflight-errors=" + strings.Join(checks, ",")}
}

// KubeadmIgnoredPreflight are the preflight checks the config's
// Init/JoinConfiguration nodeRegistration.ignorePreflightErrors name, for
// the upgrade: kubeadm upgrade runs its preflight again (SystemVerification
// among them) and reads no InitConfiguration, so a check a site had to skip
// at init would otherwise stop every upgrade.
func KubeadmIgnoredPreflight(cfg map[string]any) []string {
	var checks []string
	for _, doc := range []string{"initConfiguration", "joinConfiguration"} {
		checks = append(checks, stringList(mapAt(mapAt(cfg, doc), "nodeRegistration")["ignorePreflightErrors"])...)
	}
	return sortedUnique(checks)
}

// withPatches runs argv with --patches when the kubeadm patch directory
// exists on the host (a profile with kubeletConfig wrote it).
func withPatches(argv ...string) string {
	return "if [ -d " + shell.Quote(kubeadmPatches) + " ]; then " +
		shell.Join(append(argv, "--patches", kubeadmPatches)...) + "; else " + shell.Join(argv...) + "; fi"
}

// RestartKubeletCommand implements KubeadmUpgrader.
func (u *upstream) RestartKubeletCommand() string {
	return systemctl([]string{"restart"}, "kubelet")
}

// ControlPlaneImagesCommand implements KubeadmUpgrader.
func (u *upstream) ControlPlaneImagesCommand() string {
	files := make([]string, len(controlPlanePods))
	for i, p := range controlPlanePods {
		files[i] = path.Join(manifestsDir, p+".yaml")
	}
	script := `for f in "$@"; do printf '%s %s\n' "$f" "$(sed -n 's/^[[:space:]]*image:[[:space:]]*//p' "$f" 2>/dev/null | head -n 1)"; done`
	return shell.Join(append([]string{"sh", "-c", script, "sh"}, files...)...)
}

// StaticPodManifestsCommand implements KubeadmUpgrader: the kubelet makes
// a static pod of every file in its manifest directory but dotfiles
// (kubeadm writes NAME.yaml).
func (u *upstream) StaticPodManifestsCommand() string {
	return shell.Join("find", manifestsDir, "-mindepth", "1", "-maxdepth", "1", "-type", "f", "!", "-name", ".*", "-printf", `%f\n`)
}

// ControlPlaneVersions reads ControlPlaneImagesCommand's output: each
// control-plane pod's image tag, by pod. A pod whose manifest names no
// tagged image is an error.
func ControlPlaneVersions(out string) (map[string]string, error) {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		file, image, _ := strings.Cut(strings.TrimSpace(line), " ")
		if file == "" {
			continue
		}
		pod := strings.TrimSuffix(path.Base(file), ".yaml")
		if image = strings.TrimSpace(image); image == "" {
			return nil, fmt.Errorf("%s names no image: is the manifest there?", file)
		}
		i := strings.LastIndex(image, ":")
		if i < 0 || strings.Contains(image[i:], "/") {
			return nil, fmt.Errorf("%s names no tagged image (%q)", file, image)
		}
		got[pod] = image[i+1:]
	}
	for _, p := range controlPlanePods {
		if got[p] == "" {
			return nil, fmt.Errorf("no %s static pod manifest in %s", p, manifestsDir)
		}
	}
	return got, nil
}
