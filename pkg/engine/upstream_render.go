package engine

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

const kubeadmAPI = "kubeadm.k8s.io/v1beta4"

// Render implements Engine for kubeadm: one kubeadm config file (the
// founder's InitConfiguration and ClusterConfiguration, everyone else's
// JoinConfiguration), the profile's kubelet settings as a kubeadm patch,
// containerd's config and registry hosts, and on controllers the API
// server's audit policy and admission configuration, and kube-vip's static
// pod when it holds the VIP.
func (u *upstream) Render(in RenderInput) (Rendered, error) {
	n, err := checkInput(in, u)
	if err != nil {
		return Rendered{}, err
	}
	host := in.Host.Name()
	fail := func(err error) (Rendered, error) { return Rendered{}, fmt.Errorf("%s: %w", host, err) }

	cfg := HostConfig(in.Cluster, in.Distro, in.Host)
	if err := checkUpstreamConfig(cfg); err != nil {
		return fail(err)
	}
	if len(in.Distro.Spec.Config.Engine.Manifest) > 0 {
		if err := v1alpha1.CheckChartsFor(u.Name()); err != nil {
			return fail(err)
		}
	}
	version, err := ParseVersion(in.Distro.Spec.Version)
	if err != nil {
		return fail(fmt.Errorf("spec.version: %w", err))
	}
	if err := checkKubeadmSecrets(in, n); err != nil {
		return fail(err)
	}

	var files []File
	var patches bool
	if n.profile != nil && len(n.profile.KubeletConfig) > 0 {
		b, err := marshalYAML(n.profile.KubeletConfig)
		if err != nil {
			return Rendered{}, err
		}
		files = append(files, File{Path: u.Paths().KubeletConfig, Content: b, Mode: modePrivate})
		patches = true
	}

	reg, _, err := registries(in.Cluster, in.Distro, in.RegistryPasswords)
	if err != nil {
		return fail(err)
	}
	var profileKubelet map[string]any
	if n.profile != nil {
		profileKubelet = n.profile.KubeletConfig
	}
	driver, err := kubeletCgroupDriver(cfg, profileKubelet)
	if err != nil {
		return fail(err)
	}
	ctrd, err := containerdFiles(in.Distro, driver, reg)
	if err != nil {
		return fail(err)
	}
	files = append(files, ctrd...)

	nodeReg, err := nodeRegistration(cfg, in.Host, n)
	if err != nil {
		return fail(err)
	}
	if n.controller {
		// Before kubeadm starts: the founder's VIP is its
		// controlPlaneEndpoint, which init waits on.
		vip, ok, err := kubeVIPStaticPodFor(in, n, version)
		if err != nil {
			return fail(err)
		}
		if ok {
			files = append(files, vip)
			if !n.founder {
				skipPreflight(nodeReg, kubeadmPreflightManifests)
			}
		}
	}
	var docs []map[string]any
	var start []string
	if n.founder {
		init := merge(mapAt(cfg, "initConfiguration"), map[string]any{
			"localAPIEndpoint": localAPIEndpoint(n.ip),
			"nodeRegistration": nodeReg,
		})
		if in.Token != "" {
			init["bootstrapTokens"] = []any{map[string]any{"token": in.Token}}
		}
		if in.CertificateKey != "" {
			init["certificateKey"] = in.CertificateKey
		}
		if patches {
			init["patches"] = map[string]any{"directory": kubeadmPatches}
		}
		cluster, err := u.clusterConfiguration(cfg, in, version, n.name)
		if err != nil {
			return fail(err)
		}
		docs = append(docs, document(kubeadmAPI, "InitConfiguration", init), cluster)
		if kc := mapAt(cfg, "kubeletConfiguration"); len(kc) > 0 {
			docs = append(docs, document("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration", kc))
		}
		if kp := mapAt(cfg, "kubeProxyConfiguration"); len(kp) > 0 {
			docs = append(docs, document("kubeproxy.config.k8s.io/v1alpha1", "KubeProxyConfiguration", kp))
		}
		initCmd := []string{kubeadmBin, "init", "--config", kubeadmConfig}
		if in.CertificateKey != "" {
			initCmd = append(initCmd, "--upload-certs")
		}
		start = append(start, shell.Join(initCmd...))
	} else {
		join := merge(mapAt(cfg, "joinConfiguration"), map[string]any{
			"discovery": map[string]any{"bootstrapToken": map[string]any{
				"apiServerEndpoint": net.JoinHostPort(in.JoinAddress, strconv.Itoa(apiPort)),
				"token":             in.Token,
				"caCertHashes":      []any{in.CACertHash},
			}},
			"nodeRegistration": nodeReg,
		})
		if n.controller {
			join["controlPlane"] = map[string]any{
				"certificateKey":   in.CertificateKey,
				"localAPIEndpoint": localAPIEndpoint(n.ip),
			}
		}
		if patches {
			join["patches"] = map[string]any{"directory": kubeadmPatches}
		}
		docs = append(docs, document(kubeadmAPI, "JoinConfiguration", join))
		start = append(start, joinCommand(n.controller))
	}
	kubeadmYAML, err := joinDocuments(docs)
	if err != nil {
		return Rendered{}, err
	}
	files = append(files, File{Path: kubeadmConfig, Content: kubeadmYAML, Mode: modePrivate,
		Secret: in.Token != "" || in.CertificateKey != ""})

	if n.controller {
		apiFiles, err := u.apiserverFiles(in)
		if err != nil {
			return fail(err)
		}
		files = append(files, apiFiles...)
	}

	// containerd is restarted, not just started: the package starts it
	// with its own config, which turns the CRI plugin off.
	start = append([]string{
		systemctl([]string{"daemon-reload"}),
		systemctl([]string{"enable"}, "containerd", "kubelet"),
		systemctl([]string{"restart"}, "containerd"),
	}, start...)
	return Rendered{Files: sortFiles(files), Start: start}, nil
}

// checkUpstreamConfig applies document validation's rule to the merged
// config.
func checkUpstreamConfig(cfg map[string]any) error {
	for _, k := range sortedKeys(cfg) {
		if err := v1alpha1.CheckEngineConfigKey(v1alpha1.EngineUpstream, k, cfg[k]); err != nil {
			return fmt.Errorf("upstream engine config key %q: %w", k, err)
		}
	}
	return nil
}

// checkKubeadmSecrets checks what a node needs to join: a bootstrap token
// and the CA hash to pin, and for a controller the certificate key.
func checkKubeadmSecrets(in RenderInput, n node) error {
	if in.Token != "" && !bootstrapTokenRE.MatchString(in.Token) {
		return fmt.Errorf("the token is not a kubeadm bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})")
	}
	if in.CertificateKey != "" && !certificateKeyRE.MatchString(in.CertificateKey) {
		return fmt.Errorf("the certificate key is not 64 hex digits")
	}
	if n.founder {
		return nil
	}
	switch {
	case in.Token == "":
		return fmt.Errorf("no token to join with: run JoinTokenCommand on the leader")
	case !caCertHashRE.MatchString(in.CACertHash):
		return fmt.Errorf("no CA hash (sha256:<64 hex>) to pin the cluster CA with")
	case n.controller && in.CertificateKey == "":
		return fmt.Errorf("a controller joins with the founder's certificate key")
	}
	return nil
}

func localAPIEndpoint(ip string) map[string]any {
	return map[string]any{"advertiseAddress": ip, "bindPort": apiPort}
}

// mapAt is cfg[key] as a mapping, or an empty one.
func mapAt(cfg map[string]any, key string) map[string]any {
	m, _ := cfg[key].(map[string]any)
	return cloneMap(m)
}

// nodeRegistration is the node's name, CRI socket, node-ip, labels and
// taints, over what the config's Init/JoinConfiguration sets.
func nodeRegistration(cfg map[string]any, h *v1alpha1.Host, n node) (map[string]any, error) {
	docKey := "joinConfiguration"
	if n.founder {
		docKey = "initConfiguration"
	}
	user := mapAt(mapAt(cfg, docKey), "nodeRegistration")
	reg := merge(map[string]any{"criSocket": containerdSocket}, user)
	reg["name"] = n.name

	args, err := extraArgs(user["kubeletExtraArgs"], "nodeRegistration.kubeletExtraArgs")
	if err != nil {
		return nil, err
	}
	ours := []namedArg{{"node-ip", n.ip}}
	lbls, err := labels(nil, h.Labels)
	if err != nil {
		return nil, err
	}
	if len(lbls) > 0 {
		ours = append(ours, namedArg{"node-labels", strings.Join(lbls, ",")})
	}
	if args, err = addArgs(args, ours, "nodeRegistration.kubeletExtraArgs"); err != nil {
		return nil, err
	}
	reg["kubeletExtraArgs"] = argsList(args)

	// kubeadm taints a control plane NoSchedule unless taints is set; a
	// controller+worker or single node must stay schedulable, so it gets
	// an explicit list, empty when the host has no taints.
	hostTaints, err := taints(nil, h.Taints)
	if err != nil {
		return nil, err
	}
	var list []any
	if existing, set := reg["taints"]; set {
		list = toList(existing)
	} else if h.Role == v1alpha1.RoleController && len(hostTaints) > 0 {
		list = append(list, map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"})
	}
	for _, s := range hostTaints {
		t, _ := parseTaint(s)
		m := map[string]any{"key": t.key, "effect": t.effect}
		if t.value != "" {
			m["value"] = t.value
		}
		list = append(list, m)
	}
	switch {
	case len(list) > 0:
		reg["taints"] = list
	case h.Role == v1alpha1.RoleControllerAndWorker || h.Role == v1alpha1.RoleSingle:
		reg["taints"] = []any{}
	}
	return reg, nil
}

// clusterConfiguration is the founder's ClusterConfiguration: the version
// the package carries, the load balancer as control-plane endpoint, every
// controller in the certificate, and the audit and admission files.
func (u *upstream) clusterConfiguration(cfg map[string]any, in RenderInput, v Version, nodeName string) (map[string]any, error) {
	cc := mapAt(cfg, "clusterConfiguration")
	cc["kubernetesVersion"] = fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
	cc["controlPlaneEndpoint"] = net.JoinHostPort(u.ControlPlaneEndpoint(in.Cluster, in.Leader), strconv.Itoa(apiPort))
	if in.Cluster.Metadata.Name != "" {
		cc["clusterName"] = in.Cluster.Metadata.Name
	}
	api := mapAt(cc, "apiServer")
	api["certSANs"] = anyList(tlsSANs(in.Cluster, append(stringList(api["certSANs"]), nodeName)))

	args, err := extraArgs(api["extraArgs"], "apiServer.extraArgs")
	if err != nil {
		return nil, err
	}
	var ours []namedArg
	var volumes []any
	eng := in.Distro.Spec.Config.Engine
	p := u.Paths()
	if len(eng.Audit) > 0 || len(eng.PodSecurity) > 0 {
		volumes = append(volumes, hostPathVolume("cargoship-apiserver", apiserverFilesDir, true))
	}
	if len(eng.Audit) > 0 {
		ours = append(ours, namedArg{"audit-policy-file", p.AuditPolicy})
		if !hasNamedArg(args, "audit-log-path") {
			ours = append(ours, namedArg{"audit-log-path", auditLogDir + "/audit.log"})
			volumes = append(volumes, hostPathVolume("audit-log", auditLogDir, false))
		}
	}
	if len(eng.PodSecurity) > 0 {
		ours = append(ours, namedArg{"admission-control-config-file", p.PodSecurity})
	}
	if args, err = addArgs(args, ours, "apiServer.extraArgs"); err != nil {
		return nil, err
	}
	if len(args) > 0 {
		api["extraArgs"] = argsList(args)
	}
	if len(volumes) > 0 {
		api["extraVolumes"] = append(toList(api["extraVolumes"]), volumes...)
	}
	cc["apiServer"] = api
	return document(kubeadmAPI, "ClusterConfiguration", cc), nil
}

// FixedEndpoint is an engine whose founder names, from the first start, the
// one control-plane endpoint every node uses: kubeadm's
// controlPlaneEndpoint. k3s and rke2 instead join through the founder
// until the load balancer answers (JoinAddress).
type FixedEndpoint interface {
	// ControlPlaneEndpoint is the endpoint's host, without the port
	// (the API port).
	ControlPlaneEndpoint(c *v1alpha1.Cluster, founder *v1alpha1.Host) string
}

// ControlPlaneEndpoint implements FixedEndpoint: the load balancer (or
// the VIP, when no load balancer is named), else the founder's private
// address. kubeadm init writes every kubeconfig
// against it, and joining nodes' TLS bootstrap reads the cluster-info
// kubeconfig whose server it is (docs/reference/engines.md 8).
func (u *upstream) ControlPlaneEndpoint(c *v1alpha1.Cluster, founder *v1alpha1.Host) string {
	if lb := c.Spec.Config.APIAddress(); lb != "" {
		return lb
	}
	return founder.PrivateAddress
}

func hostPathVolume(name, dir string, readOnly bool) map[string]any {
	return map[string]any{
		"name": name, "hostPath": dir, "mountPath": dir,
		"readOnly": readOnly, "pathType": "DirectoryOrCreate",
	}
}

// apiserverFiles are the audit policy and admission configuration every
// controller carries: each runs its own API server static pod.
func (u *upstream) apiserverFiles(in RenderInput) ([]File, error) {
	eng := in.Distro.Spec.Config.Engine
	p := u.Paths()
	var files []File
	if len(eng.Audit) > 0 {
		b, err := marshalYAML(document("audit.k8s.io/v1", "Policy", eng.Audit))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.AuditPolicy, Content: b, Mode: modePrivate})
	}
	if len(eng.PodSecurity) > 0 {
		b, err := marshalYAML(document("apiserver.config.k8s.io/v1", "AdmissionConfiguration", eng.PodSecurity))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.PodSecurity, Content: b, Mode: modePrivate})
	}
	return files, nil
}

// namedArg is one v1beta4 structured argument.
type namedArg struct{ name, value string }

// extraArgs reads a v1beta4 extraArgs list ({name, value} items).
func extraArgs(v any, field string) ([]namedArg, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list of {name, value} (kubeadm v1beta4)", field)
	}
	var out []namedArg
	for _, e := range list {
		m, ok := e.(map[string]any)
		name, _ := m["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("%s must be a list of {name, value} (kubeadm v1beta4)", field)
		}
		out = append(out, namedArg{name, fmt.Sprint(m["value"])})
	}
	return out, nil
}

func hasNamedArg(args []namedArg, name string) bool {
	for _, a := range args {
		if a.name == name {
			return true
		}
	}
	return false
}

// addArgs adds cargoship's arguments, refusing a config that sets one of
// them to something else.
func addArgs(args, ours []namedArg, field string) ([]namedArg, error) {
	for _, o := range ours {
		for _, a := range args {
			if a.name == o.name && a.value != o.value {
				return nil, fmt.Errorf("%s sets %s=%s; cargoship sets it to %s", field, a.name, a.value, o.value)
			}
		}
		if !hasNamedArg(args, o.name) {
			args = append(args, o)
		}
	}
	sort.SliceStable(args, func(i, j int) bool { return args[i].name < args[j].name })
	return args, nil
}

func argsList(args []namedArg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = map[string]any{"name": a.name, "value": a.value}
	}
	return out
}

// joinDocuments is a multi-document file: kubeadm reads all its config
// kinds from the one --config file, so here "---" separates documents
// (and never leads the file).
func joinDocuments(docs []map[string]any) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := marshalYAML(d)
		if err != nil {
			return nil, err
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}
