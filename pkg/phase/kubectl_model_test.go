package phase

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// kubectlModel is a controller's kubectl for phase tests: it keeps nodes
// and answers get nodes, label, taint and annotate as kubectl and the API
// server do (docs/reference/engines.md 9): a value changes only with
// --overwrite, removing a label that is not there is not an error,
// removing a taint that is not there is.
type kubectlModel struct {
	mu    sync.Mutex
	nodes map[string]*modelNode
	calls [][]string // kubectl's arguments, get nodes left out
}

type modelNode struct {
	labels, annotations map[string]string
	taints              []engine.Taint
}

func newKubectlModel(names ...string) *kubectlModel {
	m := &kubectlModel{nodes: map[string]*modelNode{}}
	for _, n := range names {
		m.nodes[n] = &modelNode{labels: map[string]string{"kubernetes.io/hostname": n}, annotations: map[string]string{}}
	}
	return m
}

// fake is a host whose kubectl is the model; nothing else answers.
func (m *kubectlModel) fake(name string) *hosttest.Fake {
	return (&hosttest.Fake{Name: name, Strict: true}).Handle("kubectl", m.handle)
}

// kubectlArgs are the words after kubectl in an Engine.Kubectl line (the
// k3s one repeats them per binary directory; the first copy is taken).
func kubectlArgs(cmd string) []string {
	w := hosttest.Words(cmd)
	i := slices.IndexFunc(w, func(s string) bool { return s == "kubectl" || strings.HasSuffix(s, "/kubectl") })
	if i < 0 {
		return nil
	}
	rest := w[i+1:]
	if len(rest) >= 2 && rest[0] == "--kubeconfig" {
		rest = rest[2:] // upstream's
	}
	var out []string
	for _, a := range rest {
		last := strings.HasSuffix(a, ";")
		out = append(out, strings.TrimSuffix(a, ";"))
		if last {
			break
		}
	}
	return out
}

func (m *kubectlModel) handle(c hosttest.Call) (string, error) {
	args := kubectlArgs(c.Cmd)
	m.mu.Lock()
	defer m.mu.Unlock()
	fail := func(format string, a ...any) (string, error) {
		return "", &host.ExitError{Host: "model", Cmd: c.Cmd, Code: 1, Stderr: "error: " + fmt.Sprintf(format, a...)}
	}
	if len(args) >= 2 && args[0] == "get" && args[1] == "nodes" {
		return m.list(), nil
	}
	m.calls = append(m.calls, args)
	if len(args) < 3 || args[1] != "node" {
		return fail("the model answers only get nodes and label|taint|annotate node N")
	}
	n := m.nodes[args[2]]
	if n == nil {
		return fail(`nodes %q not found`, args[2])
	}
	overwrite := slices.Contains(args[3:], "--overwrite")
	var ops []string
	for _, a := range args[3:] {
		if !strings.HasPrefix(a, "--") {
			ops = append(ops, a)
		}
	}
	switch args[0] {
	case "label", "annotate":
		target := n.labels
		if args[0] == "annotate" {
			target = n.annotations
		}
		for _, op := range ops {
			if k, ok := strings.CutSuffix(op, "-"); ok && !strings.Contains(op, "=") {
				delete(target, k)
				continue
			}
			k, v, _ := strings.Cut(op, "=")
			if old, ok := target[k]; ok && old != v && !overwrite {
				return fail("'%s' already has a value (%s), and --overwrite is false", k, old)
			}
			target[k] = v
		}
		if args[0] == "label" {
			return "node/" + args[2] + " labeled\n", nil
		}
		return "node/" + args[2] + " annotated\n", nil
	case "taint":
		for _, op := range ops {
			if id, ok := strings.CutSuffix(op, "-"); ok {
				i := slices.IndexFunc(n.taints, func(t engine.Taint) bool { return t.ID() == id })
				if i < 0 {
					return fail("taint %q not found", id)
				}
				n.taints = slices.Delete(n.taints, i, i+1)
				continue
			}
			t, err := engine.ParseTaint(op)
			if err != nil {
				return fail("%v", err)
			}
			i := slices.IndexFunc(n.taints, func(h engine.Taint) bool { return h.ID() == t.ID() })
			switch {
			case i >= 0 && !overwrite:
				return fail("node %s already has %s taint(s) with same effect(s) and --overwrite is false", args[2], t.Key)
			case i >= 0:
				n.taints[i] = t
			default:
				n.taints = append(n.taints, t)
			}
		}
		return "node/" + args[2] + " modified\n", nil
	}
	return fail("unknown command %q", args[0])
}

// list is `kubectl get nodes -o json`, every node Ready.
func (m *kubectlModel) list() string {
	names := make([]string, 0, len(m.nodes))
	for n := range m.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	var items []any
	for _, name := range names {
		n := m.nodes[name]
		var taints []any
		for _, t := range n.taints {
			tm := map[string]any{"key": t.Key, "effect": t.Effect}
			if t.Value != "" {
				tm["value"] = t.Value
			}
			taints = append(taints, tm)
		}
		items = append(items, map[string]any{
			"metadata": map[string]any{"name": name, "labels": n.labels, "annotations": n.annotations},
			"spec":     map[string]any{"taints": taints},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
		})
	}
	b, _ := json.Marshal(map[string]any{"kind": "List", "items": items})
	return string(b)
}

// takeCalls returns the mutating calls made so far and forgets them.
func (m *kubectlModel) takeCalls() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.calls
	m.calls = nil
	return out
}
