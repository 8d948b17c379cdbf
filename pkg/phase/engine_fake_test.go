package phase

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// shRunner is a host for the phases after the engine runs, a
// hosttest.Fake: kubectl and systemctl lines are answered (`get nodes`
// from nodes) instead of run, the load balancer probe fails, and the rest
// (the file scripts of pkg/host) runs for real with sh on a hosttest.Local
// that moves the engine's directories under root. Calls gives the
// kubectl, systemctl and file write lines.
type shRunner struct {
	*hosttest.Fake
	root  string
	nodes func() string // `kubectl get nodes -o json` output

	mu   sync.Mutex
	seen int // commands of Fake already given out by Calls
}

// engineDirs are the absolute paths moved under a shRunner's root.
var engineDirs = []string{"/run/cargoship/", "/etc/rancher/", "/var/lib/rancher/", "/etc/cargoship/", "/etc/containerd/", "/etc/kubernetes/"}

func newSHRunner(t *testing.T, name string) *shRunner {
	r := &shRunner{root: t.TempDir(), nodes: func() string { return `{"items":[]}` }}
	local := &hosttest.Local{Name: name, Rewrite: func(cmd string) string {
		for _, d := range engineDirs {
			cmd = strings.ReplaceAll(cmd, d, r.root+d)
		}
		return cmd
	}}
	kube := func(c hosttest.Call) (string, error) {
		if strings.Contains(c.Cmd, "get nodes") {
			return r.nodes(), nil
		}
		return "", nil
	}
	r.Fake = (&hosttest.Fake{Name: name, Else: local}).
		Fail("/dev/tcp/", 1, "").
		Handle("kubectl", kube).
		Handle("systemctl", kube)
	return r
}

// recorded is the line Calls gives for cmd, ok=false for a command it
// leaves out (the probe, file reads and the like).
func recorded(cmd string) (string, bool) {
	switch {
	case strings.Contains(cmd, "/dev/tcp/"):
		return "", false
	case strings.Contains(cmd, "kubectl"), strings.Contains(cmd, "systemctl"):
		return cmd, true
	case strings.Contains(cmd, "mktemp"): // host.WriteFile's script
		return "write " + cmd, true
	}
	return "", false
}

// Calls returns the recorded lines (kubectl, systemctl, file writes) and
// forgets them.
func (r *shRunner) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	cmds := r.Commands()
	var out []string
	for _, c := range cmds[r.seen:] {
		if line, ok := recorded(c); ok {
			out = append(out, line)
		}
	}
	r.seen = len(cmds)
	return out
}

// path is where the host's file p lives on this machine.
func (r *shRunner) path(p string) string { return filepath.Join(r.root, p) }

func (r *shRunner) write(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(r.path(p)), 0o755))
	require.NoError(t, os.WriteFile(r.path(p), []byte(content), 0o600))
}

func (r *shRunner) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(r.path(p))
	require.NoError(t, err)
	return string(b)
}

// k3sTestState is a running k3s cluster of one controller (c1) and the
// workers named, each host its own shRunner, every engine running.
func k3sTestState(t *testing.T, workers ...string) (*node.Fleet, map[string]*shRunner) {
	t.Helper()
	c := &v1alpha1.Cluster{Metadata: v1alpha1.ClusterMetadata{Name: "test"}}
	c.Spec.Config.Loadbalancer = "10.0.0.1"
	c.Spec.Config.Registries = []v1alpha1.Registry{{Name: "docker.io", Mirrors: []string{"https://mirror.example:5000"}}}
	add := func(name, role, profile, ip string) {
		c.Spec.Hosts = append(c.Spec.Hosts, v1alpha1.Host{
			SSH: &v1alpha1.SSH{Address: ip}, Hostname: name, PrivateAddress: ip, Role: role, Profile: profile,
		})
	}
	add("c1", v1alpha1.RoleController, v1alpha1.RoleController, "10.0.0.1")
	for i, w := range workers {
		add(w, v1alpha1.RoleWorker, v1alpha1.RoleWorker, fmt.Sprintf("10.0.1.%d", i+1))
	}
	d := &v1alpha1.Distro{}
	d.Spec.Type = v1alpha1.EngineK3s
	d.Spec.Version = "1.35.3-k3s1"
	d.Spec.Config.Engine.Config = map[string]any{"write-kubeconfig-mode": "0600"}
	d.Spec.Config.Engine.Manifest = map[string]any{"traefik": "replicas: 1\n"}
	s := node.New(c, d, node.Options{WorkerConcurrency: 1}, slog.New(slog.DiscardHandler))
	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	s.Engine = eng
	runners := map[string]*shRunner{}
	for _, h := range s.Hosts {
		r := newSHRunner(t, h.Spec.Hostname)
		runners[h.Spec.Hostname] = r
		h.Conn, h.EngineRunning, h.EngineVersion = r, true, "1.35.3+k3s1"
		h.Facts.Hostname = h.Spec.Hostname
	}
	runners["c1"].write(t, eng.ServerTokenPath(), "K10abc::server:secret\n")
	return s, runners
}

// nodesJSON is `kubectl get nodes -o json` for Ready nodes with labels.
func nodesJSON(t *testing.T, labels map[string]map[string]string) string {
	t.Helper()
	type item struct {
		Metadata map[string]any `json:"metadata"`
		Status   map[string]any `json:"status"`
	}
	var items []item
	for name, l := range labels {
		items = append(items, item{
			Metadata: map[string]any{"name": name, "labels": l},
			Status:   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
		})
	}
	b, err := json.Marshal(map[string]any{"items": items})
	require.NoError(t, err)
	return string(b)
}
