package phase

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
}

// State is what phases share: the documents, the hosts, the report.
type State struct {
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
}

// NewState builds the run's hosts from the inventory.
func NewState(c *v1alpha1.Cluster, d *v1alpha1.Distro, o Options, log *slog.Logger) *State {
	s := &State{Cluster: c, Distro: d, Options: o, Report: &Report{}, Log: log, Arches: d.Arches()}
	for i := range c.Spec.Hosts {
		s.Hosts = append(s.Hosts, &Host{Spec: &c.Spec.Hosts[i], Index: i})
	}
	return s
}
