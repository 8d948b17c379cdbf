// Package node is what is done to the nodes of a run: the run's hosts and
// their facts, bounded fan-out over them, and the operations phases share
// (place and install files, render and write the engine's config, start,
// stop, wait Ready, cordon, drain, restart, kubectl through a controller,
// the cluster token). It knows nothing of phases or their order.
package node

import (
	"log/slog"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
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
	// LookupEnv reads the environment (sudo passwords, registry passwords,
	// SSH_KNOWN_HOSTS); it tells unset from empty.
	LookupEnv func(string) (string, bool)
	// ConnectTimeout bounds how long a host that does not answer is
	// retried (host.DefaultConnectTimeout when zero).
	ConnectTimeout time.Duration
	// SkipUnready upgrades the Ready nodes and leaves the others.
	SkipUnready bool
	// LockWait is how long to wait for another run's lock.
	LockWait time.Duration
	// KubeconfigOut is where phase 28 writes the admin kubeconfig on the
	// machine cargoship runs on; "" skips the phase.
	KubeconfigOut string
	// LabelNodes makes phase 29 label each node with its profile.
	LabelNodes bool
	// TargetHosts are the hosts a reset takes out, by inventory name or
	// address; none means the whole cluster.
	TargetHosts []string
	// NoFanout sends every file from this machine (--fanout=false): no
	// host passes a file on to another (relay.go).
	NoFanout bool
}

// Fleet is one run over an inventory: the documents, the hosts and what
// the phases learn about them, the engine, the options and the report.
// Apply's and prepare's phases share one; the node operations in this
// package (install, start, drain, restart, kubectl) are its methods.
type Fleet struct {
	Cluster *v1alpha1.Cluster
	Distro  *v1alpha1.Distro
	// Package is the verified package; nil for commands that need none.
	Package *pkgfile.Package
	Engine  engine.Engine
	Hosts   Hosts
	// ClusterDir is the inventory's directory: relative src paths of host
	// files are read from it.
	ClusterDir string
	// Arches are the architectures the package carries.
	Arches  []string
	Options Options
	Report  *Report
	Log     *slog.Logger

	mu      sync.Mutex  // guards per-host lists phases append to concurrently
	token   string      // the cluster token once found or made; never logged
	kubeadm joinSecrets // kubeadm's join secrets, for upstream
	// restarting is the controller being restarted, which kubectl avoids.
	restarting *Host
	// leaving are the hosts a reset takes out.
	leaving map[*Host]bool
	// founded says this run founded the cluster: its controllers join
	// through the founder, whatever the load balancer answers.
	founded bool

	// SettlePoll is the pause between samples of a kubeadm controller's
	// control plane (kubeadm_settle.go); 0 means 5 seconds. Tests of the
	// phases shorten it.
	SettlePoll time.Duration
}

// New builds the run's hosts from the inventory.
func New(c *v1alpha1.Cluster, d *v1alpha1.Distro, o Options, log *slog.Logger) *Fleet {
	s := &Fleet{Cluster: c, Distro: d, Options: o, Report: &Report{}, Log: log, Arches: d.Arches()}
	for i := range c.Spec.Hosts {
		s.Hosts = append(s.Hosts, &Host{Spec: &c.Spec.Hosts[i], Index: i})
	}
	return s
}

// Logger returns the run's logger, or a discarding one.
func (s *Fleet) Logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
