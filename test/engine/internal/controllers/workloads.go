package controllers

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// The workloads every test cluster runs. Their names say what they are:
// stand-ins, not the engines' packaged components.
const (
	namespace = "kube-system"
	// daemonSet puts one pod on every node; drain must skip it
	// (--ignore-daemonsets).
	daemonSet = "testengine-node-agent"
	// replicaSet keeps one pod per node, spread over schedulable nodes;
	// its pods have an emptyDir (drain needs --delete-emptydir-data) and
	// are what a drain evicts.
	replicaSet = "testengine-workload"
	image      = "registry.invalid/cargoship/testengine-pause:1"
)

// workloads makes the owners exist and their pods match the nodes.
func (m *Manager) workloads() {
	dsUID := m.ensureOwner("daemonsets", daemonSet)
	rsUID := m.ensureOwner("replicasets", replicaSet)
	if dsUID == "" || rsUID == "" {
		return
	}
	nodes := map[string]kube.Object{}
	var names []string
	for _, n := range m.Store.List("nodes", "") {
		name := kube.Str(n, "metadata.name")
		nodes[name] = n
		names = append(names, name)
	}
	sort.Strings(names)

	dsPods := map[string][]kube.Object{}
	var rsPods []kube.Object
	for _, p := range m.Store.List("pods", namespace) {
		node := kube.Str(p, "spec.nodeName")
		if node != "" && nodes[node] == nil {
			// Pod garbage collection: its node is gone.
			m.deletePod(p, "its node "+node+" was deleted")
			continue
		}
		switch ownerName(p) {
		case daemonSet:
			dsPods[node] = append(dsPods[node], p)
		case replicaSet:
			rsPods = append(rsPods, p)
		}
	}

	for _, name := range names {
		pods := dsPods[name]
		if len(pods) == 0 {
			m.createPod("DaemonSet", daemonSet, dsUID, nodes[name], false)
		}
		for _, extra := range pods[min(1, len(pods)):] {
			m.deletePod(extra, "more than one daemon pod on "+name)
		}
	}
	m.scaleReplicaSet(rsUID, rsPods, names, nodes)
}

// scaleReplicaSet keeps one pod per node, schedules pending ones and
// removes extras.
func (m *Manager) scaleReplicaSet(uid string, pods []kube.Object, names []string, nodes map[string]kube.Object) {
	want := max(1, len(names))
	load := map[string]int{}
	for _, p := range pods {
		load[kube.Str(p, "spec.nodeName")]++
	}
	for len(pods) > want {
		sort.Slice(pods, func(i, j int) bool {
			return load[kube.Str(pods[i], "spec.nodeName")] > load[kube.Str(pods[j], "spec.nodeName")]
		})
		victim := pods[0]
		load[kube.Str(victim, "spec.nodeName")]--
		m.deletePod(victim, "the ReplicaSet has too many replicas")
		pods = pods[1:]
	}
	for _, p := range pods {
		if kube.Str(p, "spec.nodeName") != "" {
			continue
		}
		if node := pickNode(names, nodes, load); node != nil {
			load[kube.Str(node, "metadata.name")]++
			m.bind(p, node)
		}
	}
	for i := len(pods); i < want; i++ {
		node := pickNode(names, nodes, load)
		if node != nil {
			load[kube.Str(node, "metadata.name")]++
		}
		m.createPod("ReplicaSet", replicaSet, uid, node, true)
	}
}

// pickNode is the schedulable node with the fewest replicas: Ready, not
// cordoned, and without NoSchedule/NoExecute taints (the workload
// tolerates none).
func pickNode(names []string, nodes map[string]kube.Object, load map[string]int) kube.Object {
	var best kube.Object
	for _, name := range names {
		n := nodes[name]
		if !schedulable(n) {
			continue
		}
		if best == nil || load[name] < load[kube.Str(best, "metadata.name")] {
			best = n
		}
	}
	return best
}

func schedulable(n kube.Object) bool {
	if u, _ := kube.Get(n, "spec.unschedulable").(bool); u || !ready(n) {
		return false
	}
	taints, _ := kube.Get(n, "spec.taints").([]any)
	for _, t := range taints {
		if tm, ok := t.(map[string]any); ok && (tm["effect"] == "NoSchedule" || tm["effect"] == "NoExecute") {
			return false
		}
	}
	return true
}

// ensureOwner makes the DaemonSet or ReplicaSet object exist and returns
// its uid.
func (m *Manager) ensureOwner(resource, name string) string {
	key := store.Key{Resource: resource, Namespace: namespace, Name: name}
	if o, ok := m.Store.Get(key); ok {
		return kube.Str(o, "metadata.uid")
	}
	kind := map[string]string{"daemonsets": "DaemonSet", "replicasets": "ReplicaSet"}[resource]
	o := kube.ToObject(kube.Workload{
		TypeMeta: kube.TypeMeta{APIVersion: "apps/v1", Kind: kind},
		Metadata: kube.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec:     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": name}}},
		Status:   map[string]any{},
	})
	created, err := m.Store.Create(key, o)
	if err != nil {
		logx.Warnf("create %s %s/%s: %v", kind, namespace, name, err)
		return ""
	}
	return kube.Str(created, "metadata.uid")
}

func ownerName(p kube.Object) string {
	refs, _ := kube.Get(p, "metadata.ownerReferences").([]any)
	for _, r := range refs {
		if rm, ok := r.(map[string]any); ok && rm["controller"] == true {
			s, _ := rm["name"].(string)
			return s
		}
	}
	return ""
}

// createPod makes an owned pod, bound and Running on node, or Pending
// when node is nil.
func (m *Manager) createPod(kind, owner, uid string, node kube.Object, emptyDir bool) {
	name := owner + "-" + kube.RandomSuffix()
	pod := kube.Pod{
		TypeMeta: kube.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		Metadata: kube.ObjectMeta{
			Name: name, Namespace: namespace, Labels: map[string]string{"app": owner},
			OwnerReferences: []kube.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, UID: uid, Controller: true, BlockOwnerDeletion: true}},
		},
		Spec:   kube.PodSpec{Containers: []kube.Container{{Name: "main", Image: image}}},
		Status: kube.PodStatus{Phase: "Pending", Conditions: []kube.PodCondition{{Type: "PodScheduled", Status: "False", Reason: "Unschedulable", LastTransitionTime: store.Now()}}},
	}
	if emptyDir {
		pod.Spec.Volumes = []kube.Volume{{Name: "scratch", EmptyDir: &struct{}{}}}
	}
	if kind == "DaemonSet" {
		pod.Spec.Tolerations = []kube.Toleration{{Operator: "Exists"}}
	}
	obj := kube.ToObject(pod)
	if node != nil {
		runOn(obj, node)
	}
	if _, err := m.Store.Create(store.Key{Resource: "pods", Namespace: namespace, Name: name}, obj); err != nil {
		logx.Warnf("create pod %s/%s: %v", namespace, name, err)
	}
}

// bind schedules a pending pod onto node.
func (m *Manager) bind(p kube.Object, node kube.Object) {
	key := store.Key{Resource: "pods", Namespace: namespace, Name: kube.Str(p, "metadata.name")}
	_, _ = m.Store.Update(key, func(o kube.Object) (kube.Object, error) {
		if kube.Str(o, "spec.nodeName") == "" {
			runOn(o, node)
		}
		return o, nil
	})
}

// runOn binds a pod to node and reports it Running and Ready: the test
// engine starts no containers, so a bound pod is simply up.
func runOn(o kube.Object, node kube.Object) {
	now := store.Now()
	nodeName := kube.Str(node, "metadata.name")
	kube.Set(o, "spec.nodeName", nodeName)
	status := kube.PodStatus{
		Phase: "Running", HostIP: kube.NodeInternalIP(node), PodIP: podIP(nodeName), StartTime: now,
		Conditions: []kube.PodCondition{
			{Type: "PodScheduled", Status: "True", LastTransitionTime: now},
			{Type: "Initialized", Status: "True", LastTransitionTime: now},
			{Type: "ContainersReady", Status: "True", LastTransitionTime: now},
			{Type: "Ready", Status: "True", LastTransitionTime: now},
		},
		ContainerStatuses: []kube.ContainerStatus{{Name: "main", Ready: true, Image: image, State: map[string]any{"running": map[string]any{"startedAt": now}}}},
	}
	o["status"] = kube.ToObject(status)
}

// podIP is an address in the default cluster CIDR, one /24 per node name;
// nothing routes it.
func podIP(node string) string {
	h := 0
	for _, c := range node {
		h = h*31 + int(c)
	}
	return fmt.Sprintf("10.42.%d.%d", h&0xff, 2+rand.IntN(250))
}

func (m *Manager) deletePod(p kube.Object, why string) {
	ns, name := kube.Str(p, "metadata.namespace"), kube.Str(p, "metadata.name")
	if _, err := m.Store.Delete(store.Key{Resource: "pods", Namespace: ns, Name: name}); err == nil {
		logx.Infof("Deleted pod %s/%s: %s", ns, name, why)
	}
}
