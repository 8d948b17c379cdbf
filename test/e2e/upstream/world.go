package upstream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// world is a walk's fleet and where its runs write.
type world struct {
	fleet      *fleet.Fleet
	kubeconfig string // phase 28's admin kubeconfig, read with this machine's kubectl
	in         *e2eutil.Inspector
	t          *testing.T
}

func newWorld(t *testing.T, f *fleet.Fleet) *world {
	t.Helper()
	c := loadInventory(t, f.InventoryPath)
	return &world{
		fleet: f, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"),
		in: e2eutil.NewInspector(t, c.Spec.Hosts, f.KnownHostsPath), t: t,
	}
}

// options are a whole run's, as the CLI makes them.
func (w *world) options(pkgPath string, dry bool) action.Options {
	return action.Options{
		PackagePath: pkgPath,
		ClusterPath: w.fleet.InventoryPath,
		TmpDir:      os.TempDir(),
		Log:         e2eutil.TestLogger(w.t),
		Phase: node.Options{
			DryRun: dry, UpdateHosts: true, UpdateFirewall: true,
			Concurrency: 10, UploadConcurrency: 10,
			Timeout:        30 * time.Minute,
			KnownHostsPath: w.fleet.KnownHostsPath,
			InstanceID:     fmt.Sprintf("e2e-upstream-%d-%d", os.Getpid(), time.Now().UnixNano()),
			LookupEnv:      os.LookupEnv,
			KubeconfigOut:  w.kubeconfig,
			LabelNodes:     true,
		},
	}
}

// apply is a whole apply of pkg.
func (w *world) apply(pkg *upstreamPackage) *node.Report {
	w.t.Helper()
	return e2eutil.RunWhole(w.t, w.options(pkg.Path, false), action.ApplyPhases())
}

// kubectl runs this machine's kubectl against the cluster through the
// kubeconfig apply exported, failing the test when it fails.
func (w *world) kubectl(stdin string, args ...string) string {
	w.t.Helper()
	out, err := w.tryKubectl(stdin, args...)
	if err != nil {
		w.t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (w *world) tryKubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", w.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// eventually retries check every two seconds until it returns "" (done)
// or timeout passes, then fails with its last word.
func (w *world) eventually(what string, timeout time.Duration, check func() string) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not so after %s: %s", what, timeout, why)
		}
		time.Sleep(2 * time.Second)
	}
}

// nodes are the cluster's nodes by name.
func (w *world) nodes() (map[string]node.Node, error) {
	out, err := w.tryKubectl("", "get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	list, err := node.ParseNodes(out)
	if err != nil {
		return nil, err
	}
	m := map[string]node.Node{}
	for _, n := range list {
		m[n.Name] = n
	}
	return m, nil
}

// allReadyAt waits until every fleet host is a Ready node whose kubelet
// is at version (v1.35.4), schedulable.
func (w *world) allReadyAt(version string, timeout time.Duration) {
	w.t.Helper()
	w.eventually("every node Ready at "+version, timeout, func() string {
		ns, err := w.nodes()
		if err != nil {
			return err.Error()
		}
		var not []string
		for _, h := range w.fleet.Hosts {
			n, ok := ns[h.Name]
			switch {
			case !ok:
				not = append(not, h.Name+" is no node")
			case !n.Ready:
				not = append(not, h.Name+" not Ready")
			case n.KubeletVersion != version:
				not = append(not, h.Name+" at "+n.KubeletVersion)
			case n.Unschedulable:
				not = append(not, h.Name+" cordoned")
			}
		}
		return strings.Join(not, "; ")
	})
}

func loadInventory(t *testing.T, path string) *v1alpha1.Cluster {
	t.Helper()
	c, findings, err := v1alpha1.LoadClusterFile(path)
	if err != nil {
		t.Fatalf("the fleet's inventory: %v %v", err, findings)
	}
	return c
}
