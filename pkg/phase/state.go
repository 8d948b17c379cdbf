package phase

import (
	"log/slog"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Options are the run's switches, resolved from flags and settings.
type Options struct {
	DryRun            bool
	UpdateHosts       bool
	UpdateFirewall    bool
	Concurrency       int
	UploadConcurrency int
	WorkerConcurrency int
	Timeout           time.Duration
	// KnownHostsPath is the known_hosts file; "" turns host key checking off.
	KnownHostsPath string
	// InstanceID identifies this run in lock files.
	InstanceID string
	Getenv     func(string) string
}

// State is what phases share: the documents, the hosts, the report.
type State struct {
	Cluster *v1alpha1.Cluster
	Distro  *v1alpha1.Distro
	Hosts   Hosts
	// Arches are the architectures the package carries.
	Arches  []string
	Options Options
	Report  *Report
	Log     *slog.Logger
}

// NewState builds the run's hosts from the inventory.
func NewState(c *v1alpha1.Cluster, d *v1alpha1.Distro, o Options, log *slog.Logger) *State {
	s := &State{Cluster: c, Distro: d, Options: o, Report: &Report{}, Log: log, Arches: d.Arches()}
	for i := range c.Spec.Hosts {
		s.Hosts = append(s.Hosts, &Host{Spec: &c.Spec.Hosts[i], Index: i})
	}
	return s
}
