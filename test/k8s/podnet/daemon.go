package podnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"
)

// Daemon is podnet on one node: it waits for the node's pod CIDR, writes
// the CNI configuration for it, then keeps the routes to every other
// node's pod CIDR, polling the Nodes every Interval.
type Daemon struct {
	// NodeName is this node's name (the pod's spec.nodeName).
	NodeName string
	// API reads the Nodes.
	API *Client
	// Routes is the host's route table.
	Routes *Routes
	// CNIDir is where the conflist goes (/etc/cni/net.d).
	CNIDir string
	// ProcDir is procfs (/proc), for net.ipv4.ip_forward.
	ProcDir string
	// Interval is the time between two polls (DefaultInterval if zero).
	Interval time.Duration
	// Log is where it says what it does (slog.Default() if nil).
	Log *slog.Logger
}

// DefaultInterval is how often the daemon reads the Nodes.
const DefaultInterval = 5 * time.Second

// Run works until ctx ends, which is a clean stop (nil). An API server
// that does not answer, or answers with an error, is retried on the next
// poll; so is a route the kernel refuses. What cannot get better by
// waiting (forwarding that cannot be turned on, a conflist that cannot be
// written) is returned, so the pod restarts with it in its log.
func (d *Daemon) Run(ctx context.Context) error {
	if d.Interval <= 0 {
		d.Interval = DefaultInterval
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if err := d.validate(); err != nil {
		return err
	}
	if err := d.ipForward(); err != nil {
		return err
	}
	podCIDR, err := d.waitPodCIDR(ctx)
	if err != nil || !podCIDR.IsValid() {
		return err
	}
	if err := d.writeConflist(podCIDR); err != nil {
		return err
	}
	t := time.NewTicker(d.Interval)
	defer t.Stop()
	for {
		if err := d.sync(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			d.Log.Info("stopping; routes and CNI configuration stay in place")
			return nil
		case <-t.C:
		}
	}
}

func (d *Daemon) ipForward() error {
	changed, err := EnsureIPForward(d.ProcDir)
	if err != nil {
		return err
	}
	if changed {
		d.Log.Info("turned on IPv4 forwarding")
	}
	return nil
}

// waitPodCIDR polls this node until kube-controller-manager has given it
// a pod CIDR. It returns the zero prefix and nil if ctx ends first.
func (d *Daemon) waitPodCIDR(ctx context.Context) (netip.Prefix, error) {
	for {
		n, err := d.API.Node(ctx, d.NodeName)
		switch {
		case ctx.Err() != nil:
			return netip.Prefix{}, nil
		case err != nil:
			d.Log.Warn("reading this node; retrying", "node", d.NodeName, "err", err)
		case !n.PodCIDR.IsValid():
			d.Log.Info("waiting for kube-controller-manager to give this node an IPv4 pod CIDR", "node", d.NodeName)
		default:
			d.Log.Info("node has its pod CIDR", "node", d.NodeName, "cidr", n.PodCIDR.String())
			return n.PodCIDR, nil
		}
		select {
		case <-ctx.Done():
			return netip.Prefix{}, nil
		case <-time.After(d.Interval):
		}
	}
}

func (d *Daemon) writeConflist(podCIDR netip.Prefix) error {
	b, err := Conflist(podCIDR)
	if err != nil {
		return err
	}
	changed, err := WriteConflist(d.CNIDir, b)
	if err != nil {
		return err
	}
	if changed {
		d.Log.Info("wrote CNI configuration", "file", d.CNIDir+"/"+ConflistName, "cidr", podCIDR.String())
	}
	return nil
}

// sync is one poll: the Nodes, the conflist (a node re-registered with
// another pod CIDR gets it rewritten) and the routes.
func (d *Daemon) sync(ctx context.Context) error {
	if err := d.ipForward(); err != nil {
		return err
	}
	nodes, err := d.API.Nodes(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Warn("listing nodes; retrying", "err", err)
		}
		return nil
	}
	for _, n := range nodes {
		if n.Name == d.NodeName && n.PodCIDR.IsValid() {
			if err := d.writeConflist(n.PodCIDR); err != nil {
				return err
			}
		}
	}
	diff, err := d.Routes.Sync(DesiredRoutes(d.NodeName, nodes))
	for _, r := range diff.Set {
		d.Log.Info("route set", "route", r.String())
	}
	for _, r := range diff.Del {
		d.Log.Info("route deleted", "route", r.String())
	}
	if err != nil {
		d.Log.Warn("syncing routes; retrying", "err", err)
	}
	return nil
}

// validate checks the fields Run needs.
func (d *Daemon) validate() error {
	switch {
	case d.NodeName == "":
		return errors.New("podnet daemon: no node name (NODE_NAME from the downward API's spec.nodeName)")
	case d.API == nil || d.Routes == nil:
		return fmt.Errorf("podnet daemon: API and Routes are required")
	case d.CNIDir == "" || d.ProcDir == "":
		return fmt.Errorf("podnet daemon: CNIDir and ProcDir are required")
	}
	return nil
}
