// Package action is what a command does: which phases, in which order,
// over which documents. The cli package turns flags into Options; this
// package loads and verifies everything before a single host is touched.
package action

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Options are what apply, prepare and reset share.
type Options struct {
	// PackagePath is the package; a reset may go without one.
	PackagePath string
	// Engine names the engine when there is no package (reset --distro);
	// with neither, the engine is found on the hosts.
	Engine string
	// ClusterPath is the inventory file; with ClusterData it only names
	// the document in messages.
	ClusterPath string
	// ClusterData is the inventory already in memory (the provider builds
	// it from its attributes); nil reads ClusterPath.
	ClusterData []byte
	// ClusterDir resolves relative paths in the inventory.
	ClusterDir string
	// Trust is the trust policy the package is opened under; with none,
	// Load warns that the package was checked against itself only.
	Trust  pkgfile.TrustPolicy
	TmpDir string
	Phase  node.Options
	Log    *slog.Logger
}

// Loaded is everything a run needs, verified.
type Loaded struct {
	State *node.Fleet
}

// Close releases the package's extracted copy.
func (l *Loaded) Close() error {
	if l.State.Package != nil {
		return l.State.Package.Close()
	}
	return nil
}

// Load reads the inventory and opens the package. Both are checked fully
// here, so a document or package that fails leaves every host untouched.
func Load(ctx context.Context, o Options) (*Loaded, error) {
	cluster, findings, err := loadCluster(o)
	if err != nil {
		return nil, err
	}
	for _, f := range findings.Warnings() {
		o.Log.Warn(f.String())
	}
	for _, name := range o.Phase.TargetHosts {
		if !hasHost(cluster, name) {
			return nil, fmt.Errorf("--target-hosts: %s names no host %q", o.ClusterPath, name)
		}
	}
	if o.Phase.InstanceID == "" {
		o.Phase.InstanceID = InstanceID()
	}
	if o.PackagePath == "" {
		// No package: the engine named, or found on the hosts by phase 5.
		d := &v1alpha1.Distro{}
		d.Spec.Type = o.Engine
		st := node.New(cluster, d, o.Phase, o.Log)
		st.ClusterDir = o.ClusterDir
		if o.Engine != "" {
			eng, err := engine.For(o.Engine)
			if err != nil {
				return nil, fmt.Errorf("--distro: %w", err)
			}
			st.Engine = eng
		}
		return &Loaded{State: st}, nil
	}
	pkg, err := pkgfile.OpenContext(ctx, o.PackagePath, pkgfile.OpenOptions{Trust: o.Trust, TmpDir: o.TmpDir})
	if err != nil {
		return nil, err
	}
	if w := o.Trust.Unverified(pkg); w != "" {
		o.Log.Warn(w)
	} else if pkg.SignatureVerified {
		o.Log.Info("package signature verified", "package", o.PackagePath, "key", pkg.KeyID)
	}
	eng, err := engine.For(pkg.Distro.Spec.Type)
	if err != nil {
		_ = pkg.Close()
		return nil, fmt.Errorf("package %s: %w", o.PackagePath, err)
	}
	if err := checkWithDistro(o, pkg.Distro); err != nil {
		_ = pkg.Close()
		return nil, err
	}
	st := node.New(cluster, pkg.Distro, o.Phase, o.Log)
	st.Package = pkg
	st.ClusterDir = o.ClusterDir
	st.Engine = eng
	return &Loaded{State: st}, nil
}

// hasHost reports whether the inventory has a host of that name or
// address.
func hasHost(c *v1alpha1.Cluster, name string) bool {
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		if h.Hostname == name || h.Address() == name {
			return true
		}
	}
	return false
}

// Run walks phases over a loaded state and logs the summary.
func Run(ctx context.Context, l *Loaded, phases []phase.Phase) error {
	st := l.State
	if st.Options.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, st.Options.Timeout)
		defer cancel()
	}
	start := time.Now()
	err := (&phase.Manager{Phases: phases, State: st}).Run(ctx)
	if err != nil {
		st.Report.Fail(err)
		st.Log.Error("failed", "after", time.Since(start).Round(time.Millisecond).String(), "error", err)
		return err
	}
	st.Log.Info("finished", "duration", time.Since(start).Round(time.Millisecond).String(), "dryRun", st.Options.DryRun)
	return nil
}

// InstanceID names this run in lock files: host and pid.
func InstanceID() string {
	h, err := os.Hostname()
	if err != nil {
		h = "unknown"
	}
	return h + "-" + strconv.Itoa(os.Getpid())
}
