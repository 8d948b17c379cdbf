package daemon

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// nodeSpec is what this host's Node says about it.
type nodeSpec struct {
	fl       flavor.Flavor
	id       identity
	version  string
	server   bool
	etcd     bool
	dataDir  string
	labels   []string // node-label
	taints   []string // node-taint
	nodeArgs []string
}

// labelMap is what a node registers with: its baseLabels and node-label.
func (n nodeSpec) labelMap() (map[string]string, error) {
	m := n.baseLabels()
	for _, l := range n.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid node-label %q: want key=value", l)
		}
		m[k] = v
	}
	return m, nil
}

// baseLabels are the kubelet's well-known labels and for servers the role
// labels k3s and rke2 set (docs/reference/engines.md 9): the labels a
// restart brings up to date on an existing node. node-label is not among
// them: it applies at registration only (docs/reference/engines.md 3.4).
func (n nodeSpec) baseLabels() map[string]string {
	m := map[string]string{
		"kubernetes.io/hostname": n.id.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": runtime.GOARCH,
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": runtime.GOARCH,
		"beta.kubernetes.io/instance-type": n.fl.Name, "node.kubernetes.io/instance-type": n.fl.Name,
	}
	if n.server {
		m["node-role.kubernetes.io/control-plane"] = "true"
		m["node-role.kubernetes.io/master"] = "true"
		if n.etcd {
			m["node-role.kubernetes.io/etcd"] = "true"
		}
	}
	return m
}

// taintList parses node-taint entries, key[=value]:Effect.
func (n nodeSpec) taintList() ([]kube.Taint, error) {
	var out []kube.Taint
	for _, t := range n.taints {
		kv, effect, ok := strings.Cut(t, ":")
		if !ok || (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
			return nil, fmt.Errorf("invalid node-taint %q: want key[=value]:NoSchedule|PreferNoSchedule|NoExecute", t)
		}
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, kube.Taint{Key: k, Value: v, Effect: effect})
	}
	return out, nil
}

// annotations are the engine's node annotations (k3s.io/… or rke2.io/…).
func (n nodeSpec) annotations() map[string]string {
	p := n.fl.AnnotationPrefix()
	args, _ := json.Marshal(n.nodeArgs)
	env, _ := json.Marshal(map[string]string{strings.ToUpper(n.fl.Name) + "_DATA_DIR": n.dataDir})
	sum := sha256.Sum256(args)
	a := map[string]string{
		p + "node-args": string(args), p + "node-env": string(env),
		p + "node-config-hash": base32.StdEncoding.EncodeToString(sum[:])[:52],
		p + "hostname":         n.id.name, p + "internal-ip": strings.Join(n.id.ips, ","),
		"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
	}
	if len(n.id.externalIPs) > 0 {
		a[p+"external-ip"] = strings.Join(n.id.externalIPs, ",")
	}
	return a
}

// status is the node status a kubelet posts: Ready and the pressure
// conditions with a fresh heartbeat, addresses, capacity and nodeInfo.
// transition is when Ready last changed.
func (n nodeSpec) status(transition string) kube.NodeStatus {
	now := store.Now()
	cond := func(t, s, reason, msg string) kube.NodeCondition {
		return kube.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: transition}
	}
	var addrs []kube.NodeAddress
	for _, ip := range n.id.ips {
		addrs = append(addrs, kube.NodeAddress{Type: "InternalIP", Address: ip})
	}
	for _, ip := range n.id.externalIPs {
		addrs = append(addrs, kube.NodeAddress{Type: "ExternalIP", Address: ip})
	}
	addrs = append(addrs, kube.NodeAddress{Type: "Hostname", Address: n.id.name})
	st := kube.NodeStatus{
		Capacity: capacity(), Allocatable: capacity(),
		Conditions: []kube.NodeCondition{
			cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: addrs, NodeInfo: nodeInfo(n.version),
	}
	st.DaemonEndpoints.KubeletEndpoint.Port = 10250
	return st
}

// object is the Node a kubelet registers.
func (n nodeSpec) object() (kube.Object, error) {
	labels, err := n.labelMap()
	if err != nil {
		return nil, err
	}
	taints, err := n.taintList()
	if err != nil {
		return nil, err
	}
	node := kube.Node{
		TypeMeta: kube.TypeMeta{APIVersion: "v1", Kind: "Node"},
		Metadata: kube.ObjectMeta{Name: n.id.name, Labels: labels, Annotations: n.annotations()},
		Spec:     kube.NodeSpec{ProviderID: n.fl.Name + "://" + n.id.name, Taints: taints},
		Status:   n.status(store.Now()),
	}
	return kube.ToObject(node), nil
}
