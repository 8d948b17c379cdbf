package controllers

import (
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// unreachable is the taint the node lifecycle controller puts on a node
// whose status is Unknown.
const unreachable = "node.kubernetes.io/unreachable"

// lifecycle marks nodes whose heartbeat is older than the grace period
// Unknown (kubectl shows NotReady) and taints them unreachable, and lifts
// the taints once the kubelet posts Ready again, as the node lifecycle
// controller does.
func (m *Manager) lifecycle() {
	for _, n := range m.Store.List("nodes", "") {
		name := kube.Str(n, "metadata.name")
		key := store.Key{Resource: "nodes", Name: name}
		stale := m.stale(name)
		switch {
		case stale && ready(n):
			logx.Infof("Node %s has not posted status for %s, marking it NotReady", name, m.Grace)
			_, _ = m.Store.Update(key, markUnknown)
		case !stale && hasTaint(n, unreachable):
			_, _ = m.Store.Update(key, func(o kube.Object) (kube.Object, error) {
				setTaints(o, withoutTaint(o, unreachable))
				return o, nil
			})
		}
	}
}

// markUnknown sets every kubelet-owned condition Unknown with the node
// controller's reason and message, and adds the unreachable taints.
func markUnknown(o kube.Object) (kube.Object, error) {
	if !ready(o) {
		return o, nil
	}
	now := store.Now()
	conds, _ := kube.Get(o, "status.conditions").([]any)
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		cm["status"] = "Unknown"
		cm["reason"] = "NodeStatusUnknown"
		cm["message"] = "Kubelet stopped posting node status."
		cm["lastTransitionTime"] = now
	}
	taints := withoutTaint(o, unreachable)
	taints = append(taints,
		map[string]any{"key": unreachable, "effect": "NoSchedule", "timeAdded": now},
		map[string]any{"key": unreachable, "effect": "NoExecute", "timeAdded": now})
	setTaints(o, taints)
	return o, nil
}

func hasTaint(o kube.Object, key string) bool {
	taints, _ := kube.Get(o, "spec.taints").([]any)
	for _, t := range taints {
		if tm, ok := t.(map[string]any); ok && tm["key"] == key {
			return true
		}
	}
	return false
}

func withoutTaint(o kube.Object, key string) []any {
	taints, _ := kube.Get(o, "spec.taints").([]any)
	var out []any
	for _, t := range taints {
		if tm, ok := t.(map[string]any); ok && tm["key"] == key {
			continue
		}
		out = append(out, t)
	}
	return out
}

func setTaints(o kube.Object, taints []any) {
	if len(taints) == 0 {
		kube.Delete(o, "spec.taints")
		return
	}
	kube.Set(o, "spec.taints", taints)
}
