package phase

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// shRunner is a host for the phases after the engine runs: the file
// scripts of pkg/host run for real with sh, with the engine's directories
// moved under root; kubectl and systemctl lines are answered and recorded
// instead (file writes are recorded too), and the load balancer probe fails.
type shRunner struct {
	name  string
	root  string
	nodes func() string // `kubectl get nodes -o json` output

	mu    sync.Mutex
	calls []string // kubectl, systemctl and file write lines, in order
}

// engineDirs are the absolute paths moved under a shRunner's root.
var engineDirs = []string{"/run/lock/", "/etc/rancher/", "/var/lib/rancher/", "/etc/cargoship/", "/etc/containerd/", "/etc/kubernetes/"}

func newSHRunner(t *testing.T, name string) *shRunner {
	return &shRunner{name: name, root: t.TempDir(), nodes: func() string { return `{"items":[]}` }}
}

func (r *shRunner) String() string { return r.name }

func (r *shRunner) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return r.Sudo(ctx, cmd, opts...)
}

func (r *shRunner) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	switch {
	case strings.Contains(cmd, "/dev/tcp/"):
		return "", &host.ExitError{Host: r.name, Cmd: "probe", Code: 1}
	case strings.Contains(cmd, "kubectl"), strings.Contains(cmd, "systemctl"):
		r.mu.Lock()
		r.calls = append(r.calls, cmd)
		r.mu.Unlock()
		if strings.Contains(cmd, "get nodes") {
			return r.nodes(), nil
		}
		return "", nil
	}
	if strings.Contains(cmd, "mktemp") {
		r.mu.Lock()
		r.calls = append(r.calls, "write "+cmd)
		r.mu.Unlock()
	}
	for _, d := range engineDirs {
		cmd = strings.ReplaceAll(cmd, d, r.root+d)
	}
	o := host.Apply(opts)
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Stdin, c.Stdout, c.Stderr = o.Stdin, &stdout, &stderr
	if o.Stdout != nil {
		c.Stdout = o.Stdout
	}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return "", &host.ExitError{Host: r.name, Cmd: cmd, Code: ee.ExitCode(), Stderr: stderr.String()}
	}
	return stdout.String(), err
}

// Calls returns the recorded lines (kubectl, systemctl, file writes) and
// forgets them.
func (r *shRunner) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
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
