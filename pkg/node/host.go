package node

import (
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// Host is one inventory host during a run: its document entry, its
// connection, and what the phases have learned about it.
type Host struct {
	Spec  *v1alpha1.Host
	Index int
	Conn  host.Runner
	OS    hostos.OS
	Facts Facts
	// EngineVersion is the engine version installed on the host, "" when
	// none is.
	EngineVersion string
	// EngineRunning says the node's engine service is active.
	EngineRunning bool
	// JoinsThrough is the server the node's engine config joins through,
	// "" for the cluster's first server (or an engine whose config names
	// none): read with the engine facts, kept in step by WriteRendered.
	JoinsThrough string
	// Started says this run started or restarted the engine on the host
	// (initialize or upgrade): later phases leave it alone.
	Started bool
	// Route is the upload phase that claimed the host (rpm, apt, binary),
	// set from the files that phase actually uploaded to it.
	Route string
	// Staged are executables uploaded and waiting to be moved into place.
	Staged []StagedFile
	// Packages are package files uploaded for the host's route, waiting
	// for the package manager.
	Packages []string
}

// Facts are what phases 2 and 3 read off the host.
type Facts struct {
	OSID, OSVersion, OSPretty string
	Family                    string
	Hostname                  string // node name: the inventory's, else the host's
	FQDN                      string
	PrivateAddress            string
	PrivateInterface          string
	Arch                      string
	InitSystem                string
	SELinux                   string // enforcing, permissive, disabled, absent
	Fapolicyd                 bool   // running
	Firewalls                 []FirewallFact
}

// FirewallFact is one firewall front end found on a host.
type FirewallFact struct {
	Name   string
	Active bool
}

// String names the host in messages: the inventory name and address.
func (h *Host) String() string {
	if h.Spec.Hostname != "" && h.Spec.Hostname != h.Spec.Address() {
		return h.Spec.Hostname
	}
	return h.Spec.Address()
}

// NodeName is the name the node registers under.
func (h *Host) NodeName() string {
	if h.Spec.Hostname != "" {
		return h.Spec.Hostname
	}
	return h.Facts.Hostname
}

// IsController reports whether the host runs the engine's server.
func (h *Host) IsController() bool { return h.Spec.IsController() }

// Hosts is a list of run hosts with the filters phases select by.
type Hosts []*Host

// Filter returns the hosts keep accepts.
func (hs Hosts) Filter(keep func(*Host) bool) Hosts {
	var out Hosts
	for _, h := range hs {
		if keep(h) {
			out = append(out, h)
		}
	}
	return out
}

// Controllers returns the controller-type hosts in inventory order.
func (hs Hosts) Controllers() Hosts { return hs.Filter((*Host).IsController) }

// Workers returns the worker hosts in inventory order.
func (hs Hosts) Workers() Hosts {
	return hs.Filter(func(h *Host) bool { return !h.IsController() })
}

// Names lists the hosts' names, for messages.
func (hs Hosts) Names() string {
	n := make([]string, len(hs))
	for i, h := range hs {
		n[i] = h.String()
	}
	return strings.Join(n, ", ")
}
