package node

import (
	"fmt"
	"slices"
)

// ResetPlan is which hosts a reset takes out and which stay. It is worked
// out before any host is changed, and every refusal names the host and the
// rule (docs/reset.md, "What a reset refuses").
type ResetPlan struct {
	// Targets are the hosts to reset, workers first, then controllers.
	Targets Hosts
	// Survivors are the hosts that stay in the cluster.
	Survivors Hosts
	// Whole is true when every host is reset: no node is drained or
	// deleted, every host is uninstalled.
	Whole bool
	// Through is the staying controller whose engine runs: kubectl drains
	// and deletes the targets' nodes through it. nil for a whole reset.
	Through *Host
	// NewFirst is the controller every survivor joins through once the
	// targets are gone: the first staying controller whose engine runs.
	NewFirst *Host
	// FirstLeaves says a target is the cluster's first server (it joined
	// through none), so NewFirst takes that role.
	FirstLeaves bool
}

// Targeted reports whether h is reset.
func (p ResetPlan) Targeted(h *Host) bool { return slices.Contains(p.Targets, h) }

// PlanReset resolves --target-hosts against the inventory and checks the
// rules a subset reset must keep. names empty, or naming every host, is a
// whole reset. It reads the hosts' engine facts (EngineVersion,
// EngineRunning) and changes nothing.
func PlanReset(hosts Hosts, names []string) (ResetPlan, error) {
	var p ResetPlan
	picked := map[*Host]bool{}
	for _, n := range names {
		h := hosts.Named(n)
		if h == nil {
			return p, fmt.Errorf("--target-hosts: no host %q in the inventory (its hosts: %s)", n, hosts.Names())
		}
		picked[h] = true
	}
	if len(picked) == 0 || len(picked) == len(hosts) {
		p.Whole = true
		p.Targets = append(hosts.Workers(), hosts.Controllers()...)
		return p, nil
	}
	for _, h := range hosts {
		if picked[h] {
			p.Targets = append(p.Targets, h)
		} else {
			p.Survivors = append(p.Survivors, h)
		}
	}
	p.Targets = append(p.Targets.Workers(), p.Targets.Controllers()...)
	running := func(h *Host) bool { return h.IsController() && h.EngineRunning && h.Conn != nil }
	goingControllers := p.Targets.Filter(running)
	stayingControllers := p.Survivors.Filter(running)
	if len(goingControllers) > 1 {
		return p, fmt.Errorf("--target-hosts names %d running controllers (%s): remove one controller per run, so the cluster keeps its quorum and every survivor is repointed before the next leaves",
			len(goingControllers), goingControllers.Names())
	}
	installed := p.Targets.Filter(func(h *Host) bool { return h.EngineVersion != "" || h.EngineRunning })
	if len(installed) > 0 && len(stayingControllers) == 0 {
		if len(goingControllers) > 0 {
			return p, fmt.Errorf("--target-hosts names every running controller (%s) while %s stay: their nodes would be deleted through a machine being uninstalled; reset the whole cluster, or keep a controller",
				goingControllers.Names(), p.Survivors.Names())
		}
		return p, fmt.Errorf("no staying controller runs the engine to drain and delete %s through; start one, or reset the whole cluster", installed.Names())
	}
	if len(stayingControllers) > 0 {
		p.Through, p.NewFirst = stayingControllers[0], stayingControllers[0]
	}
	for _, h := range goingControllers {
		p.FirstLeaves = p.FirstLeaves || h.JoinsThrough == ""
	}
	return p, nil
}

// Named finds a host by the name the inventory gives it, by the address
// cargoship connects to, or by how messages name it.
func (hs Hosts) Named(name string) *Host {
	for _, h := range hs {
		if h.Spec.Hostname == name || h.Spec.Address() == name || h.String() == name {
			return h
		}
	}
	return nil
}
