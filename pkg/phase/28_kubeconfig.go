package phase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// kubeconfigMode is the mode of every kubeconfig cargoship writes: it
// holds the cluster's admin credentials.
const kubeconfigMode fs.FileMode = 0o600

// localHost names the machine cargoship runs on in the report.
const localHost = "(local)"

// Kubeconfig writes the cluster's admin kubeconfig, pointed at the load
// balancer, to node.Options.KubeconfigOut on the machine cargoship runs on.
type Kubeconfig struct {
	base
	data []byte // what to write; nil when the file is already current
}

// Title implements Phase.
func (p *Kubeconfig) Title() string { return "Updating kubeconfig file with the current cluster" }

// Prepare implements Preparer: it reads the leader's admin kubeconfig and
// compares it with the local file. Both are reads.
func (p *Kubeconfig) Prepare(ctx context.Context) error {
	s := p.state
	p.data = nil
	out := s.Options.KubeconfigOut
	if out == "" {
		return nil
	}
	h := s.KubectlHost()
	if h == nil {
		if s.Options.DryRun {
			return ErrUnassessed
		}
		return fmt.Errorf("no controller runs %s: there is no admin kubeconfig to read", s.Engine.Name())
	}
	data, err := FetchKubeconfig(ctx, h.Conn, s.Engine, s.Cluster.Spec.Config.Loadbalancer)
	if err != nil {
		return err
	}
	current, err := localFileCurrent(out, data, kubeconfigMode)
	if err != nil {
		return err
	}
	if !current {
		p.data = data
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *Kubeconfig) ShouldRun() bool { return p.data != nil }

// Plan implements Planner.
func (p *Kubeconfig) Plan(context.Context) ([]node.Change, error) {
	return []node.Change{{Host: localHost, What: p.what("write")}}, nil
}

// Run implements Phase.
func (p *Kubeconfig) Run(context.Context) error {
	changed, err := WriteLocalFile(p.state.Options.KubeconfigOut, p.data, kubeconfigMode)
	if err != nil {
		return err
	}
	if changed {
		p.state.Report.Add(node.Change{Host: localHost, Phase: p.Title(), What: p.what("wrote")})
	}
	return nil
}

func (p *Kubeconfig) what(verb string) string {
	s := p.state
	return fmt.Sprintf("%s the admin kubeconfig to %s (%04o), server %s", verb, s.Options.KubeconfigOut, kubeconfigMode,
		engine.ServerURL(s.Cluster.Spec.Config.Loadbalancer, s.Engine.APIPort()))
}

// FetchKubeconfig reads a controller's admin kubeconfig and points it at
// the load balancer, for use from outside the cluster.
func FetchKubeconfig(ctx context.Context, r host.Runner, e engine.Engine, loadbalancer string) ([]byte, error) {
	if loadbalancer == "" {
		return nil, errors.New("the inventory names no spec.config.loadbalancer to point the kubeconfig at")
	}
	raw, err := host.ReadFile(ctx, r, e.Paths().Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the admin kubeconfig: %w", r, err)
	}
	out, err := engine.AdminKubeconfig(raw, engine.ServerURL(loadbalancer, e.APIPort()))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r, e.Paths().Kubeconfig, err)
	}
	return out, nil
}

// ClusterKubeconfig connects to the inventory's controllers in order and
// returns the admin kubeconfig of the first whose engine runs, pointed at
// the load balancer: what `cargoship kube-config` writes.
func ClusterKubeconfig(ctx context.Context, c *v1alpha1.Cluster, e engine.Engine, opts host.ConnectOptions) ([]byte, error) {
	var tried []string
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		if !h.IsController() {
			continue
		}
		data, err := controllerKubeconfig(ctx, h, e, c.Spec.Config.Loadbalancer, opts)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tried = append(tried, fmt.Sprintf("%s: %v", h.Name(), err))
	}
	if len(tried) == 0 {
		return nil, errors.New("the inventory has no controller")
	}
	return nil, fmt.Errorf("no controller gave its admin kubeconfig:\n - %s", strings.Join(tried, "\n - "))
}

// controllerKubeconfig reads one controller's admin kubeconfig when its
// engine runs.
func controllerKubeconfig(ctx context.Context, h *v1alpha1.Host, e engine.Engine, loadbalancer string, opts host.ConnectOptions) ([]byte, error) {
	conn, err := host.Connect(ctx, h, opts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	unit := e.Service(true)
	state, _ := conn.Sudo(ctx, shell.Join("systemctl", "is-active", unit))
	if strings.TrimSpace(state) != "active" {
		return nil, fmt.Errorf("%s does not run", unit)
	}
	return FetchKubeconfig(ctx, conn, e, loadbalancer)
}

// localFileCurrent says the local file at path already holds data at mode.
func localFileCurrent(path string, data []byte, mode fs.FileMode) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", path)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return bytes.Equal(have, data) && fi.Mode().Perm() == mode, nil
}

// WriteLocalFile writes data to path on this machine at mode, atomically
// (a temp file in the same directory, renamed over it), and only when the
// file differs: changed is false when it was already current. A symlink
// is followed, so ~/.kube/config pointing elsewhere keeps pointing there.
func WriteLocalFile(path string, data []byte, mode fs.FileMode) (changed bool, err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	current, err := localFileCurrent(path, data, mode)
	if err != nil || current {
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	// CreateTemp makes the file 0600, so the content is never readable by
	// others, even for a moment.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".cargoship-*")
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
