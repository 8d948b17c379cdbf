package phase

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// kubeadmFleet is a kubeadm cluster of Debian hosts for phase tests, each a
// hosttest.Fake over one shared model, answering what the upgrade and
// initialize phases run as the real tools do (docs/test-engine.md, "Fakes
// in the phase unit tests"): dpkg-deb and dpkg-query read the model's
// package files and installed packages, apt-get installs files, kubeadm
// upgrade apply refuses a kubeadm older than its target and moves the
// cluster's and the host's control plane, kubeadm upgrade node moves a
// controller's to the cluster's, a kubelet (re)started reports the
// installed kubelet's version, kubectl lists nodes and takes cordon,
// drain and uncordon, and the TCP probe gets what answering says of an
// address, or no answer. Every step is logged, in order, as "host: what".
type kubeadmFleet struct {
	mu        sync.Mutex
	log       []string
	files     map[string]hostos.Package    // package file path -> what it holds
	installed map[string]map[string]string // host -> package -> version
	kubelet   map[string]string            // node -> kubeletVersion reported
	manifests map[string]string            // controller -> control-plane image tag
	cluster   string                       // the kubeadm-config kubernetesVersion
	answering map[string]string            // address -> "open" or "refused"; others time out
	fakes     map[string]*hosttest.Fake
	// restarting counts, per controller, the kubectl calls its own API
	// server still refuses while the kubelet recreates the control plane
	// (after kubeadm upgrade, and after a kubelet restart at a new
	// version): they answer Forbidden, as a starting API server's RBAC
	// does, and the call that ends the count logs "control plane settled".
	restarting map[string]int
}

// restartWindow is how many kubectl calls a restarting control plane
// refuses.
const restartWindow = 2

// newKubeadmFleet is a running cluster at have (controllers c1.., workers
// w1..), every host with the package at want uploaded and queued.
func newKubeadmFleet(t *testing.T, have, want string, controllers, workers int) (*node.Fleet, *kubeadmFleet) {
	t.Helper()
	c := &v1alpha1.Cluster{Metadata: v1alpha1.ClusterMetadata{Name: "test"}}
	c.Spec.Config.Loadbalancer = "10.0.0.100"
	add := func(name, role, ip string) {
		c.Spec.Hosts = append(c.Spec.Hosts, v1alpha1.Host{SSH: &v1alpha1.SSH{Address: ip}, Hostname: name, PrivateAddress: ip, Role: role})
	}
	for i := 1; i <= controllers; i++ {
		add(fmt.Sprintf("c%d", i), v1alpha1.RoleController, fmt.Sprintf("10.0.0.%d", i))
	}
	for i := 1; i <= workers; i++ {
		add(fmt.Sprintf("w%d", i), v1alpha1.RoleWorker, fmt.Sprintf("10.0.1.%d", i))
	}
	d := &v1alpha1.Distro{}
	d.Spec.Type = v1alpha1.EngineUpstream
	d.Spec.Version = want
	s := node.New(c, d, node.Options{WorkerConcurrency: 1}, slog.New(slog.DiscardHandler))
	eng, err := engine.For(v1alpha1.EngineUpstream)
	require.NoError(t, err)
	s.Engine = eng
	s.SettlePoll = time.Millisecond

	m := &kubeadmFleet{
		files: map[string]hostos.Package{}, installed: map[string]map[string]string{},
		kubelet: map[string]string{}, manifests: map[string]string{}, cluster: "v" + have,
		answering: map[string]string{}, fakes: map[string]*hosttest.Fake{}, restarting: map[string]int{},
	}
	var queued []string
	for _, p := range []string{"kubeadm", "kubelet", "kubectl", "cri-tools"} {
		file := fmt.Sprintf("/var/lib/kubernetes/deb/%s_%s-1.1_amd64.deb", p, want)
		m.files[file] = hostos.Package{Name: p, Version: want + "-1.1", Arch: "amd64"}
		queued = append(queued, file)
	}
	for _, h := range s.Hosts {
		name := h.Spec.Hostname
		m.installed[name] = map[string]string{"kubeadm": have + "-1.1", "kubelet": have + "-1.1", "kubectl": have + "-1.1", "cri-tools": "1.34.0-1.1"}
		m.kubelet[name] = "v" + have
		if h.IsController() {
			m.manifests[name] = "v" + have
		}
		f := m.fake(name)
		m.fakes[name] = f
		h.Conn, h.EngineRunning, h.EngineVersion = f, true, "v"+have
		h.OS = hostos.OS{Family: v1alpha1.FamilyDebian}
		h.Facts.Hostname = name
		h.Packages = slices.Clone(queued)
	}
	return s, m
}

func (m *kubeadmFleet) record(host, what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, host+": "+what)
}

// steps returns the log and forgets it.
func (m *kubeadmFleet) steps() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.log
	m.log = nil
	return out
}

func (m *kubeadmFleet) fake(name string) *hosttest.Fake {
	fail := func(c hosttest.Call, msg string) (string, error) {
		return "", &host.ExitError{Host: name, Cmd: c.Cmd, Code: 1, Stderr: msg}
	}
	f := &hosttest.Fake{Name: name, Strict: true}
	f.Handle("/dev/tcp/", func(c hosttest.Call) (string, error) {
		_, args, _ := c.Script()
		m.record(name, "probe "+strings.Join(args, ":"))
		m.mu.Lock()
		answer, ok := m.answering[args[0]]
		m.mu.Unlock()
		if ok {
			return answer + "\n", nil // "open" or "refused"
		}
		out, err := fail(c, "")
		return "no answer in 3s\n" + out, err
	})
	f.Handle("dpkg-deb -f", func(c hosttest.Call) (string, error) {
		_, args, _ := c.Script()
		p, ok := m.files[args[0]]
		if !ok {
			return fail(c, "dpkg-deb: error: failed to read archive")
		}
		return fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: %s\n", p.Name, p.Version, p.Arch), nil
	})
	f.Handle("dpkg-query", func(c hosttest.Call) (string, error) {
		_, args, _ := c.Script()
		m.mu.Lock()
		defer m.mu.Unlock()
		if v, ok := m.installed[name][args[1]]; ok {
			return fmt.Sprintf("ii|%s|%s|amd64", args[1], v), nil
		}
		return "", nil
	})
	f.Handle("Dir::Etc::SourceList", func(c hosttest.Call) (string, error) {
		_, args, _ := c.Script()
		var names []string
		m.mu.Lock()
		for _, a := range args {
			if p, ok := m.files[a]; ok {
				m.installed[name][p.Name] = p.Version
				names = append(names, p.Name)
			}
		}
		m.mu.Unlock()
		m.record(name, "install "+strings.Join(names, " "))
		return "", nil
	})
	f.Handle("command -v", func(hosttest.Call) (string, error) { return "apt-get\n", nil })
	f.Handle("kubeadm upgrade apply", func(c hosttest.Call) (string, error) {
		w := c.Args()
		target := w[slices.Index(w, "apply")+1]
		m.mu.Lock()
		kubeadm := "v" + strings.TrimSuffix(m.installed[name]["kubeadm"], "-1.1")
		m.mu.Unlock()
		if kubeadm != target {
			return fail(c, fmt.Sprintf("[upgrade/version] FATAL: the specified version to upgrade to %q is higher than the kubeadm version %q. Upgrade kubeadm first", target, kubeadm))
		}
		m.mu.Lock()
		m.cluster, m.manifests[name] = target, target
		m.restarting[name] = restartWindow
		m.mu.Unlock()
		m.record(name, "kubeadm upgrade apply "+target)
		return "[upgrade] SUCCESS! A control plane node of your cluster was upgraded to \"" + target + "\".\n", nil
	})
	f.Handle("kubeadm upgrade node", func(hosttest.Call) (string, error) {
		m.mu.Lock()
		if _, ok := m.manifests[name]; ok {
			m.manifests[name] = m.cluster
			m.restarting[name] = restartWindow
		}
		m.mu.Unlock()
		m.record(name, "kubeadm upgrade node")
		return "[upgrade] The upgrade for this node was successfully completed!\n", nil
	})
	f.Handle("image:", func(hosttest.Call) (string, error) {
		m.mu.Lock()
		tag := m.manifests[name]
		m.mu.Unlock()
		var b strings.Builder
		for _, p := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			fmt.Fprintf(&b, "/etc/kubernetes/manifests/%s.yaml registry.k8s.io/%s:%s\n", p, p, tag)
		}
		return b.String(), nil
	})
	f.Handle("systemctl", func(c hosttest.Call) (string, error) {
		w := c.Args()
		if (slices.Contains(w, "restart") || slices.Contains(w, "start")) && slices.Contains(w, "kubelet") {
			m.mu.Lock()
			v := "v" + strings.TrimSuffix(m.installed[name]["kubelet"], "-1.1")
			if _, ok := m.manifests[name]; ok && v != m.kubelet[name] {
				m.restarting[name] = restartWindow
			}
			m.kubelet[name] = v
			m.mu.Unlock()
		}
		m.record(name, c.Cmd)
		return "", nil
	})
	f.Handle("/etc/kubernetes/manifests -mindepth", func(hosttest.Call) (string, error) {
		return "etcd.yaml\nkube-apiserver.yaml\nkube-controller-manager.yaml\nkube-scheduler.yaml\n", nil
	})
	f.Handle("kubectl", func(c hosttest.Call) (string, error) {
		m.mu.Lock()
		left := m.restarting[name]
		if left > 0 {
			m.restarting[name]--
		}
		m.mu.Unlock()
		switch {
		case left == 1:
			m.record(name, "control plane settled")
			fallthrough
		case left > 1:
			return fail(c, `Error from server (Forbidden): nodes is forbidden: User "kubernetes-admin" cannot list resource "nodes" in API group "" at the cluster scope`)
		}
		args := kubectlArgs(c.Cmd)
		switch {
		case strings.Contains(c.Cmd, "--raw=/readyz"):
			return "ok", nil
		case strings.Contains(c.Cmd, "/proxy/pods"):
			return m.staticPods(name, false), nil
		case strings.Contains(c.Cmd, "kube-system"):
			return m.staticPods(name, true), nil
		}
		if len(args) >= 2 && args[0] == "get" && args[1] == "nodes" {
			return m.nodeList(), nil
		}
		m.record(name, "kubectl "+strings.Join(args[:2], " "))
		return "", nil
	})
	return f
}

// staticPods is a controller's control plane as its kubelet's /pods shows
// it, or (mirrors) as its mirror pods in the API do, settled: the spec's
// hash is the manifests' version and the kubelet's.
func (m *kubeadmFleet) staticPods(name string, mirrors bool) string {
	m.mu.Lock()
	hash := m.manifests[name] + "/" + m.kubelet[name]
	m.mu.Unlock()
	var items []any
	for _, p := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pod := map[string]any{"name": p + "-" + name}
		if !mirrors {
			pod["annotations"] = map[string]any{"kubernetes.io/config.source": "file", "kubernetes.io/config.hash": hash}
			items = append(items, map[string]any{"metadata": pod})
			continue
		}
		pod["annotations"] = map[string]any{"kubernetes.io/config.mirror": hash}
		items = append(items, map[string]any{"metadata": pod, "status": map[string]any{"containerStatuses": []any{map[string]any{
			"name": p, "ready": true, "containerID": "containerd://" + p + hash, "state": map[string]any{"running": map[string]any{}},
		}}}})
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return string(b)
}

// nodeList is `kubectl get nodes -o json`: every node Ready at the kubelet
// version it reports.
func (m *kubeadmFleet) nodeList() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.kubelet))
	for n := range m.kubelet {
		names = append(names, n)
	}
	sort.Strings(names)
	var items []any
	for _, n := range names {
		items = append(items, map[string]any{
			"metadata": map[string]any{"name": n},
			"status": map[string]any{
				"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
				"nodeInfo":   map[string]any{"kubeletVersion": m.kubelet[n]},
			},
		})
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return string(b)
}
