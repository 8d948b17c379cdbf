package testengine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	testengine "github.com/colonel-byte/cargoship/test/engine"
)

// The versions the tests build: an upgrade walks k3s from old to new.
const (
	k3sOld  = "v1.35.3+k3s1"
	k3sNew  = "v1.35.4+k3s1"
	rke2Ver = "v1.35.4+rke2r1"
)

var (
	binDir   string
	builds   sync.Map // key -> *buildResult
	ipBlocks atomic.Int32
)

type buildResult struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "testengine-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// engineBinary builds (once per test binary) the test engine for engine
// at version, named as the real binary is.
func engineBinary(t *testing.T, engine, version string) string {
	t.Helper()
	key := engine + "@" + version
	v, _ := builds.LoadOrStore(key, &buildResult{})
	b := v.(*buildResult)
	b.once.Do(func() {
		dir := filepath.Join(binDir, strings.NewReplacer("+", "-", "@", "-").Replace(key))
		if b.err = os.MkdirAll(dir, 0o755); b.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		b.path, b.err = testengine.Build(ctx, dir, testengine.Binary{Engine: engine, Version: version})
	})
	require.NoError(t, b.err)
	return b.path
}

// realKubectl is the machine's kubectl: the tests drive the test engine
// with the real client, never a fake one.
func realKubectl(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	require.NoError(t, err, "these tests need the real kubectl on PATH (the machine image has /usr/bin/kubectl)")
	return p
}

// ips hands each test its own loopback addresses, 127.<pid>.<n>.<host>,
// so engines of parallel tests and packages never share a port.
func ips(t *testing.T) func(host int) string {
	n := ipBlocks.Add(1)
	a := 100 + os.Getpid()%100
	return func(host int) string { return fmt.Sprintf("127.%d.%d.%d", a, n, host) }
}

// node is one engine process with its own root (CARGOSHIP_TESTENGINE_ROOT).
type node struct {
	t      *testing.T
	name   string
	root   string
	engine string
	cmd    *exec.Cmd
	log    string
	done   chan struct{}
}

// newNode makes a root for one host and writes its config.yaml.
func newNode(t *testing.T, engine, name, config string) *node {
	t.Helper()
	n := &node{t: t, name: name, engine: engine, root: t.TempDir()}
	n.log = filepath.Join(n.root, "engine.log")
	n.writeFile("/etc/rancher/"+engine+"/config.yaml", config, 0o600)
	t.Cleanup(func() {
		n.stop()
		if t.Failed() {
			if b, err := os.ReadFile(n.log); err == nil {
				t.Logf("--- %s log ---\n%s", name, b)
			}
		}
	})
	return n
}

// path is where the engine path p of this host is on the machine.
func (n *node) path(p string) string { return filepath.Join(n.root, p) }

func (n *node) writeFile(p, content string, mode os.FileMode) {
	n.t.Helper()
	require.NoError(n.t, os.MkdirAll(filepath.Dir(n.path(p)), 0o755))
	require.NoError(n.t, os.WriteFile(n.path(p), []byte(content), mode))
}

func (n *node) readFile(p string) string {
	n.t.Helper()
	b, err := os.ReadFile(n.path(p))
	require.NoError(n.t, err)
	return string(b)
}

// start runs "<binary> <command> args..." as this host.
func (n *node) start(binary, command string, args ...string) {
	n.t.Helper()
	require.Nil(n.t, n.cmd, "%s is already running", n.name)
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(n.t, err)
	cmd := exec.Command(binary, append([]string{command}, args...)...)
	cmd.Env = append(os.Environ(), "CARGOSHIP_TESTENGINE_ROOT="+n.root)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(n.t, cmd.Start())
	n.cmd, n.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(n.done)
	}()
}

// stop ends the engine as systemctl stop does (SIGTERM).
func (n *node) stop() { n.signal(syscall.SIGTERM) }

// kill ends the engine without warning, as a crash or power loss would.
func (n *node) kill() { n.signal(syscall.SIGKILL) }

func (n *node) signal(sig syscall.Signal) {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.done
	}
	n.cmd = nil
}

// running reports whether the process is still up.
func (n *node) running() bool {
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

func (n *node) logText() string {
	b, _ := os.ReadFile(n.log)
	return string(b)
}

// kubeconfig is the admin kubeconfig this server wrote.
func (n *node) kubeconfig() string {
	return n.path("/etc/rancher/" + n.engine + "/" + n.engine + ".yaml")
}

// kubectl runs the real kubectl with kubeconfig.
func kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, realKubectl(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustKubectl runs kubectl and fails the test if it fails.
func mustKubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, args...)
	require.NoError(t, err, "kubectl %s:\n%s", strings.Join(args, " "), out)
	return out
}

// eventually retries fn until it succeeds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// nodeView is what the tests read of a Node from kubectl get -o json.
type nodeView struct {
	Metadata struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
		Taints        []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Effect string `json:"effect"`
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"conditions"`
		Addresses []struct {
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"addresses"`
		NodeInfo struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

func (v nodeView) ready() string {
	for _, c := range v.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status
		}
	}
	return ""
}

func (v nodeView) internalIP() string {
	for _, a := range v.Status.Addresses {
		if a.Type == "InternalIP" {
			return a.Address
		}
	}
	return ""
}

// getNodes is kubectl get nodes -o json, by name.
func getNodes(t *testing.T, kubeconfig string) (map[string]nodeView, error) {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "get", "nodes", "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	var list struct {
		Kind  string     `json:"kind"`
		Items []nodeView `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	if list.Kind != "List" {
		return nil, fmt.Errorf("kubectl printed kind %q, want List", list.Kind)
	}
	m := map[string]nodeView{}
	for _, n := range list.Items {
		m[n.Metadata.Name] = n
	}
	return m, nil
}

// waitReady waits until exactly the named nodes exist, each with Ready
// status want ("True", "Unknown").
func waitNodes(t *testing.T, kubeconfig string, timeout time.Duration, want map[string]string) map[string]nodeView {
	t.Helper()
	var nodes map[string]nodeView
	eventually(t, timeout, fmt.Sprintf("nodes %v", want), func() error {
		var err error
		if nodes, err = getNodes(t, kubeconfig); err != nil {
			return err
		}
		if len(nodes) != len(want) {
			return fmt.Errorf("%d nodes, want %d", len(nodes), len(want))
		}
		for name, status := range want {
			n, ok := nodes[name]
			if !ok {
				return fmt.Errorf("node %s missing", name)
			}
			if n.ready() != status {
				return fmt.Errorf("node %s Ready=%q, want %q", name, n.ready(), status)
			}
		}
		return nil
	})
	return nodes
}
