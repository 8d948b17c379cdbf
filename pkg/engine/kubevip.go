package engine

import (
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// kube-vip, when it holds the cluster's VIP (spec.config.vip.provider
// kube-vip): a DaemonSet the k3s and rke2 controllers deploy from their
// manifests directory, or a static pod on every kubeadm controller. Every
// setting and why is in docs/reference/kube-vip.md.
const (
	// KubeVIPNamespace holds kube-vip's pods, its ServiceAccount and its
	// leader-election lease.
	KubeVIPNamespace = "kube-system"
	// KubeVIPDaemonSet is the DaemonSet name on k3s and rke2.
	KubeVIPDaemonSet = "kube-vip-ds"
	// KubeVIPStaticPod is the static pod's name on kubeadm controllers;
	// its mirror pod is KubeVIPStaticPod-<node name>.
	KubeVIPStaticPod = "kube-vip"
	// KubeVIPLease is the lease whose holder announces the VIP; its
	// holderIdentity is the holder's node name.
	KubeVIPLease = "plndr-cp-lock"
	// KubeVIPSelector selects kube-vip's pods on every engine.
	KubeVIPSelector = kubeVIPLabel + "=" + kubeVIPName
	// KubeVIPServiceAccount is the DaemonSet's ServiceAccount.
	KubeVIPServiceAccount = "kube-vip"
	// KubeVIPStaticPodPath is the kubeadm controllers' static pod.
	KubeVIPStaticPodPath = manifestsDir + "/kube-vip.yaml"
	// KubeVIPManifestFile is the DaemonSet's file in the k3s or rke2
	// manifests directory (Paths.ManifestsDir).
	KubeVIPManifestFile = "cargoship-kube-vip.yaml"

	kubeVIPLabel   = "app.kubernetes.io/name"
	kubeVIPName    = "kube-vip"
	superAdminConf = "/etc/kubernetes/super-admin.conf"

	// kubeVIPRole and its RoleBinding carry kube-vip's own names for a
	// namespaced Role (kube-vip manifest rbac --role).
	kubeVIPRole        = "kube-vip"
	kubeVIPRoleBinding = "kube-vip"
	// The cluster-wide role and binding cargoship rendered before the Role:
	// still deleted by name when kube-vip is retired, in case they remain.
	kubeVIPOldClusterRole = "system:kube-vip-role"
	kubeVIPOldBinding     = "system:kube-vip-binding"
)

// KubeVIPManifestPath is where e writes kube-vip's manifest on controllers.
func KubeVIPManifestPath(e Engine) string {
	if dir := e.Paths().ManifestsDir; dir != "" {
		return path.Join(dir, KubeVIPManifestFile)
	}
	return KubeVIPStaticPodPath
}

// KubeVIPObjects are the API objects kube-vip's DaemonSet manifest makes
// (k3s, rke2), as kubectl names them: deleting its file from the manifests
// directory leaves them in the cluster (docs/reference/kube-vip.md), so a
// cluster that stops using kube-vip deletes them by name. The list ends
// with the ClusterRole and binding earlier releases made, which the deploy
// controller prunes when the file changes but an old engine may have left.
func KubeVIPObjects() []string {
	return []string{
		"daemonset.apps/" + KubeVIPDaemonSet,
		"serviceaccount/" + KubeVIPServiceAccount,
		"role.rbac.authorization.k8s.io/" + kubeVIPRole,
		"rolebinding.rbac.authorization.k8s.io/" + kubeVIPRoleBinding,
		"clusterrole.rbac.authorization.k8s.io/" + kubeVIPOldClusterRole,
		"clusterrolebinding.rbac.authorization.k8s.io/" + kubeVIPOldBinding,
	}
}

// kubeVIP is what kube-vip is told: the same on every controller, except
// for a static pod's interface.
type kubeVIP struct {
	image   string
	address string
	subnet  int
	// iface is "" when kube-vip should take the default route's interface.
	iface                string
	lease, renew, retry  int
	port                 int
	apiServiceHost       string // KUBERNETES_SERVICE_HOST, "" for none
	apiServicePort       int
	kubeconfigOnHost     string // a static pod's kubeconfig, "" in-cluster
	controlPlaneAffinity bool
}

// kubeVIPFor is the cluster's kube-vip settings, or nil when kube-vip does
// not hold its VIP. The interface is vip.interface, else the one every
// controller names as its privateInterface, else none.
func kubeVIPFor(c *v1alpha1.Cluster, d *v1alpha1.Distro) (*kubeVIP, error) {
	v := c.Spec.Config.VIP
	if v == nil || v.ProviderName() != v1alpha1.VIPKubeVIP {
		return nil, nil
	}
	set := v.KubeVIPSettings()
	image := set.Image
	if image == "" && d.Spec.Config.KubeVIP != nil {
		image = d.Spec.Config.KubeVIP.Image
	}
	if image == "" {
		return nil, fmt.Errorf("spec.config.vip.provider is kube-vip, and neither the cluster's spec.config.vip.kubeVip.image nor the distro's spec.config.kubeVip.image names its image")
	}
	ip, err := netip.ParseAddr(v.IP())
	if err != nil {
		return nil, fmt.Errorf("spec.config.vip.address %q is not an IP address", v.Address)
	}
	subnet := v.Prefix()
	if subnet < 0 {
		// A bare address is announced alone, as kube-vip's own default.
		subnet = ip.BitLen()
	}
	iface := v.Interface
	if iface == "" {
		iface = commonInterface(c)
	}
	return &kubeVIP{
		image: image, address: ip.String(), subnet: subnet, iface: iface,
		lease: set.LeaseDuration, renew: set.RenewDeadline, retry: set.RetryPeriod,
		port: apiPort,
	}, nil
}

// commonInterface is the privateInterface every controller names, or ""
// when one names none or they differ: one DaemonSet speaks for all of them.
func commonInterface(c *v1alpha1.Cluster) string {
	iface := ""
	for _, h := range c.Spec.Hosts {
		if !h.IsController() {
			continue
		}
		if h.PrivateInterface == "" || (iface != "" && h.PrivateInterface != iface) {
			return ""
		}
		iface = h.PrivateInterface
	}
	return iface
}

// env is kube-vip's environment: control-plane mode, ARP, leader election.
func (k *kubeVIP) env() []any {
	env := []any{
		envVar("vip_arp", "true"),
		envVar("port", strconv.Itoa(k.port)),
		// The lease holder's identity; the node name, which may not be
		// the hostname kube-vip would take otherwise.
		map[string]any{"name": "vip_nodename", "valueFrom": map[string]any{
			"fieldRef": map[string]any{"fieldPath": "spec.nodeName"},
		}},
	}
	if k.iface != "" {
		env = append(env, envVar("vip_interface", k.iface))
	}
	env = append(env,
		// vip_subnet, not vip_cidr: kube-vip 0.9 dropped vip_cidr.
		envVar("vip_subnet", strconv.Itoa(k.subnet)),
		envVar("cp_enable", "true"),
		envVar("cp_namespace", KubeVIPNamespace),
		envVar("vip_leaderelection", "true"),
		envVar("vip_leasename", KubeVIPLease),
		envVar("vip_leaseduration", strconv.Itoa(k.lease)),
		envVar("vip_renewdeadline", strconv.Itoa(k.renew)),
		envVar("vip_retryperiod", strconv.Itoa(k.retry)),
		envVar("address", k.address),
	)
	if k.apiServiceHost != "" {
		// The in-cluster client dials these: the node's own API server,
		// so kube-vip needs neither a CNI nor kube-proxy, which may need
		// the VIP it is about to announce.
		env = append(env,
			envVar("KUBERNETES_SERVICE_HOST", k.apiServiceHost),
			envVar("KUBERNETES_SERVICE_PORT", strconv.Itoa(k.apiServicePort)),
		)
	}
	return env
}

func envVar(name, value string) map[string]any {
	return map[string]any{"name": name, "value": value}
}

// podSpec is the pod both forms run: host network, the capabilities ARP
// and address changes need and no others, critical priority so pressure
// never evicts the API's address.
func (k *kubeVIP) podSpec() map[string]any {
	container := map[string]any{
		"name":            kubeVIPName,
		"image":           k.image,
		"imagePullPolicy": "IfNotPresent",
		"args":            []any{"manager"},
		"env":             k.env(),
		"securityContext": map[string]any{"capabilities": map[string]any{
			"add":  []any{"NET_ADMIN", "NET_RAW"},
			"drop": []any{"ALL"},
		}},
	}
	spec := map[string]any{
		"containers":        []any{container},
		"hostNetwork":       true,
		"priorityClassName": "system-node-critical",
	}
	if k.kubeconfigOnHost != "" {
		// kube-vip reads /etc/kubernetes/admin.conf when it exists and
		// dials kubernetes:<port>, which the host alias points at the
		// local API server.
		container["volumeMounts"] = []any{map[string]any{
			"name": "kubeconfig", "mountPath": adminConf, "readOnly": true,
		}}
		spec["volumes"] = []any{map[string]any{
			"name": "kubeconfig",
			// File: the kubelet waits for kubeadm to write it, where no
			// type would let the runtime create a directory in its place.
			"hostPath": map[string]any{"path": k.kubeconfigOnHost, "type": "File"},
		}}
		spec["hostAliases"] = []any{map[string]any{"ip": "127.0.0.1", "hostnames": []any{"kubernetes"}}}
	} else {
		spec["serviceAccountName"] = KubeVIPServiceAccount
	}
	if k.controlPlaneAffinity {
		spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
					"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
				}}}},
			},
		}}
		// Controllers may be tainted, and a node without a CNI is
		// not-ready: kube-vip must run there all the same.
		spec["tolerations"] = []any{
			map[string]any{"operator": "Exists", "effect": "NoSchedule"},
			map[string]any{"operator": "Exists", "effect": "NoExecute"},
		}
	}
	return spec
}

func kubeVIPLabels() map[string]any {
	return map[string]any{kubeVIPLabel: kubeVIPName, "app.kubernetes.io/managed-by": "cargoship"}
}

// kubeVIPDaemonSet is the k3s and rke2 manifest: RBAC and a DaemonSet on
// every controller, talking to the API on its own node.
func kubeVIPDaemonSet(manifestsDir string, k *kubeVIP) (File, error) {
	k.apiServiceHost, k.apiServicePort = "127.0.0.1", apiPort
	k.controlPlaneAffinity = true
	docs := append([]map[string]any{
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": kubeVIPMeta(KubeVIPServiceAccount)},
	}, kubeVIPRBAC()...)
	docs = append(docs, map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": kubeVIPMeta(KubeVIPDaemonSet),
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{kubeVIPLabel: kubeVIPName}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": kubeVIPLabels()},
				"spec":     k.podSpec(),
			},
		},
	})
	b, err := joinDocuments(docs)
	if err != nil {
		return File{}, err
	}
	return File{Path: path.Join(manifestsDir, KubeVIPManifestFile), Content: b, Mode: modePrivate}, nil
}

// kubeVIPMeta is the metadata of one of kube-vip's objects: all of them
// live in its namespace.
func kubeVIPMeta(name string) map[string]any {
	return map[string]any{"name": name, "namespace": KubeVIPNamespace, "labels": kubeVIPLabels()}
}

// kubeVIPRBAC is what control-plane mode with ARP and a Kubernetes lease
// calls, and nothing more (docs/reference/kube-vip.md, fact 9): client-go's
// lease lock gets, creates and updates its one lease in kube-system. RBAC
// cannot limit create by name, so create stands alone; get and update are
// for kube-vip's lease only. Nodes, services and endpoints belong to modes
// cargoship never turns on, so no cluster-wide role is needed.
func kubeVIPRBAC() []map[string]any {
	const group = "rbac.authorization.k8s.io"
	leases := func(names []string, verbs ...string) map[string]any {
		r := map[string]any{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "verbs": anyList(verbs)}
		if names != nil {
			r["resourceNames"] = anyList(names)
		}
		return r
	}
	return []map[string]any{
		{
			"apiVersion": group + "/v1", "kind": "Role",
			"metadata": kubeVIPMeta(kubeVIPRole),
			"rules": []any{
				leases([]string{KubeVIPLease}, "get", "update"),
				leases(nil, "create"),
			},
		},
		{
			"apiVersion": group + "/v1", "kind": "RoleBinding",
			"metadata": kubeVIPMeta(kubeVIPRoleBinding),
			"roleRef":  map[string]any{"apiGroup": group, "kind": "Role", "name": kubeVIPRole},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": KubeVIPServiceAccount, "namespace": KubeVIPNamespace}},
		},
	}
}

// kubeVIPStaticPod is a kubeadm controller's static pod. kubeconfig is the
// host's file kube-vip authenticates with.
func kubeVIPStaticPod(k *kubeVIP, kubeconfig string) (File, error) {
	k.kubeconfigOnHost = kubeconfig
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": KubeVIPStaticPod, "namespace": KubeVIPNamespace, "labels": kubeVIPLabels()},
		"spec":     k.podSpec(),
	}
	b, err := marshalYAML(pod)
	if err != nil {
		return File{}, err
	}
	return File{Path: KubeVIPStaticPodPath, Content: b, Mode: modePrivate}, nil
}

// kubeadmPreflightManifests is the check kubeadm join runs on
// /etc/kubernetes/manifests, which must be empty unless it is skipped: a
// joining controller's kube-vip static pod is there already.
const kubeadmPreflightManifests = "DirAvailable--etc-kubernetes-manifests"

// kubeVIPStaticPodFor is a kubeadm controller's kube-vip static pod, or
// ok false when kube-vip does not hold the VIP. Each controller's own
// privateInterface carries the VIP unless vip.interface names one: a
// static pod speaks for its node alone. Once the cluster exists
// (in.ClusterExists) the founder's pod reads admin.conf too, a credential
// RBAC can take away, as kube-vip's documentation says to switch after
// init (docs/reference/kube-vip.md): every render after the founding one
// gives that file, so a converged cluster's renders agree.
func kubeVIPStaticPodFor(in RenderInput, n node, v Version) (File, bool, error) {
	k, err := kubeVIPFor(in.Cluster, in.Distro)
	if err != nil || k == nil {
		return File{}, false, err
	}
	if in.Cluster.Spec.Config.VIP.Interface == "" {
		k.iface = in.Host.PrivateInterface
	}
	// From 1.29 kubeadm init binds admin.conf's group to cluster-admin
	// only once the API answers through the control-plane endpoint,
	// which is this VIP: until then only super-admin.conf can take the
	// lease. Only the founder has one.
	kubeconfig := adminConf
	if n.founder && !in.ClusterExists && Compare(v, Version{Major: 1, Minor: 29}) >= 0 {
		kubeconfig = superAdminConf
	}
	f, err := kubeVIPStaticPod(k, kubeconfig)
	return f, err == nil, err
}

// skipPreflight adds a kubeadm preflight check to ignore to a
// nodeRegistration, keeping the ones it names.
func skipPreflight(reg map[string]any, check string) {
	list := toList(reg["ignorePreflightErrors"])
	for _, c := range list {
		if strings.EqualFold(fmt.Sprint(c), check) {
			return
		}
	}
	reg["ignorePreflightErrors"] = append(list, check)
}
