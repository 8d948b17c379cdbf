// Package controllers is the little of kube-controller-manager the test
// engine needs: the node lifecycle controller (a node whose kubelet stops
// posting status goes NotReady after the grace period) and stand-ins for
// the DaemonSet and ReplicaSet controllers, so every node runs pods a
// drain has to deal with. Only the leader server runs them: the live
// control-plane node with the smallest name.
package controllers

import (
	"context"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// DefaultGrace is kube-controller-manager's node-monitor-grace-period the
// test engine uses unless kube-controller-manager-arg sets one.
const DefaultGrace = 40 * time.Second

// Manager runs the controllers on one server.
type Manager struct {
	Store *store.Store
	// Self is this server's node name.
	Self string
	// Grace is how long a node may go without a heartbeat.
	Grace time.Duration
	// Synced reports whether this server has caught up with its peers;
	// nothing is reconciled from a view older than theirs.
	Synced func() bool

	// seen is when each node's heartbeat last changed, by this server's
	// clock: like the node lifecycle controller's probe timestamps, a
	// node gets a full grace period after the controller starts watching.
	seen map[string]observation
}

type observation struct {
	heartbeat string
	at        time.Time
}

// Run reconciles on every change to nodes or pods and once a second,
// until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	events, cancel := m.Store.Subscribe()
	defer func() { cancel() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case e, ok := <-events:
			if !ok {
				// Dropped for falling behind: subscribe again.
				events, cancel = m.Store.Subscribe()
				continue
			}
			if e.Key.Resource != "nodes" && e.Key.Resource != "pods" {
				continue
			}
		}
		if m.Synced != nil && !m.Synced() {
			continue
		}
		m.observe()
		if m.leader() {
			m.lifecycle()
			m.workloads()
		}
	}
}

// leader reports whether this server runs the controllers: it is the live
// control-plane node (fresh heartbeat) with the smallest name. Every
// server computes the same answer from the replicated nodes, so there is
// no election traffic; a brief overlap after a change is repaired by the
// next reconcile.
func (m *Manager) leader() bool {
	for _, n := range m.Store.List("nodes", "") {
		if !kube.IsControlPlane(n) {
			continue
		}
		name := kube.Str(n, "metadata.name")
		if m.stale(name) {
			continue
		}
		return name == m.Self
	}
	return false
}

// observe notes which nodes posted a new heartbeat since the last look.
func (m *Manager) observe() {
	if m.seen == nil {
		m.seen = map[string]observation{}
	}
	now := time.Now()
	live := map[string]bool{}
	for _, n := range m.Store.List("nodes", "") {
		name := kube.Str(n, "metadata.name")
		live[name] = true
		hb := ""
		if c := readyCondition(n); c != nil {
			hb, _ = c["lastHeartbeatTime"].(string)
		}
		if o, ok := m.seen[name]; !ok || o.heartbeat != hb {
			m.seen[name] = observation{heartbeat: hb, at: now}
		}
	}
	for name := range m.seen {
		if !live[name] {
			delete(m.seen, name)
		}
	}
}

// stale reports whether a node has posted no heartbeat for the grace
// period.
func (m *Manager) stale(name string) bool {
	o, ok := m.seen[name]
	return !ok || time.Since(o.at) > m.Grace
}

func readyCondition(n kube.Object) map[string]any {
	conds, _ := kube.Get(n, "status.conditions").([]any)
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok && cm["type"] == "Ready" {
			return cm
		}
	}
	return nil
}

// ready reports whether a node's Ready condition is True.
func ready(n kube.Object) bool {
	c := readyCondition(n)
	return c != nil && c["status"] == "True"
}
