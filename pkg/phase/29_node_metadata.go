package phase

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// Annotations on a node listing the inventory labels (keys) and taints
// (key:Effect) cargoship set there: one the inventory no longer gives is
// removed, and a label or taint anyone else set is never touched.
const (
	managedLabelsAnnotation = "cargoship.colonel-byte.dev/labels"
	managedTaintsAnnotation = "cargoship.colonel-byte.dev/taints"
)

// nodeMetadata is what phase 29 changes in one node's inventory labels and
// taints.
type nodeMetadata struct {
	host        *node.Host
	node        string
	setLabels   []labelChange
	dropLabels  []string
	setTaints   []taintChange
	dropTaints  []engine.Taint
	annotations map[string]string // "" removes the annotation
}

type labelChange struct {
	key, value, was string
	present         bool
}

type taintChange struct {
	taint   engine.Taint
	was     string
	present bool
}

// metadataChanges compares every registered node's labels and taints with
// what the inventory gives its host. A node not registered yet is left:
// it registers with them.
func metadataChanges(s *node.Fleet, nodes []node.Node) ([]nodeMetadata, error) {
	byName := make(map[string]*node.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var out []nodeMetadata
	for _, h := range s.Hosts {
		n := byName[h.NodeName()]
		if n == nil {
			continue
		}
		want, err := engine.RegistrationOf(s.Engine, s.Cluster, s.Distro, h.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		if m := diffMetadata(h, want, n); !m.empty() {
			out = append(out, m)
		}
	}
	return out, nil
}

// diffMetadata is what makes n carry want: labels and taints to set, those
// cargoship set before (its annotations) and want no longer has to remove,
// and the annotations to record want.
func diffMetadata(h *node.Host, want engine.Registration, n *node.Node) nodeMetadata {
	m := nodeMetadata{host: h, node: n.Name, annotations: map[string]string{}}
	keys := make([]string, 0, len(want.Labels))
	for k := range want.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		have, ok := n.Labels[k]
		if !ok || have != want.Labels[k] {
			m.setLabels = append(m.setLabels, labelChange{key: k, value: want.Labels[k], was: have, present: ok})
		}
	}
	for _, k := range annotationList(n.Annotations[managedLabelsAnnotation]) {
		if _, keep := want.Labels[k]; keep {
			continue
		}
		if _, ok := n.Labels[k]; ok {
			m.dropLabels = append(m.dropLabels, k)
		}
	}

	wanted := map[string]bool{}
	var ids []string
	for _, t := range want.Taints {
		wanted[t.ID()] = true
		ids = append(ids, t.ID())
		have, ok := findTaint(n.Taints, t.ID())
		if !ok || have.Value != t.Value {
			m.setTaints = append(m.setTaints, taintChange{taint: t, was: have.Value, present: ok})
		}
	}
	for _, id := range annotationList(n.Annotations[managedTaintsAnnotation]) {
		if wanted[id] {
			continue
		}
		if have, ok := findTaint(n.Taints, id); ok {
			m.dropTaints = append(m.dropTaints, have)
		}
	}

	sort.Strings(ids)
	for a, v := range map[string]string{managedLabelsAnnotation: strings.Join(keys, ","), managedTaintsAnnotation: strings.Join(ids, ",")} {
		if have, ok := n.Annotations[a]; have != v || (ok && v == "") {
			m.annotations[a] = v
		}
	}
	return m
}

func findTaint(ts []engine.Taint, id string) (engine.Taint, bool) {
	for _, t := range ts {
		if t.ID() == id {
			return t, true
		}
	}
	return engine.Taint{}, false
}

// annotationList reads one of the annotations above.
func annotationList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (m nodeMetadata) empty() bool {
	return len(m.setLabels)+len(m.dropLabels)+len(m.setTaints)+len(m.dropTaints)+len(m.annotations) == 0
}

// commands are the kubectl calls that make the change, label, taint, then
// annotate, so the annotations record only what was set
// (docs/reference/engines.md 9).
func (m nodeMetadata) commands() [][]string {
	var out [][]string
	if len(m.setLabels)+len(m.dropLabels) > 0 {
		args := []string{"label", "node", m.node, "--overwrite"}
		for _, l := range m.setLabels {
			args = append(args, l.key+"="+l.value)
		}
		for _, k := range m.dropLabels {
			args = append(args, k+"-")
		}
		out = append(out, args)
	}
	if len(m.setTaints)+len(m.dropTaints) > 0 {
		args := []string{"taint", "node", m.node, "--overwrite"}
		for _, t := range m.setTaints {
			args = append(args, t.taint.String())
		}
		for _, t := range m.dropTaints {
			args = append(args, t.ID()+"-")
		}
		out = append(out, args)
	}
	if len(m.annotations) > 0 {
		args := []string{"annotate", "node", m.node, "--overwrite"}
		for _, a := range m.sortedAnnotations() {
			if v := m.annotations[a]; v != "" {
				args = append(args, a+"="+v)
			} else {
				args = append(args, a+"-")
			}
		}
		out = append(out, args)
	}
	return out
}

func (m nodeMetadata) sortedAnnotations() []string {
	out := make([]string, 0, len(m.annotations))
	for a := range m.annotations {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// describe is one line per change, as a plan (done=false) or a report.
func (m nodeMetadata) describe(done bool) []string {
	verb := func(plan, past string) string {
		if done {
			return past
		}
		return plan
	}
	var out []string
	for _, l := range m.setLabels {
		msg := fmt.Sprintf("%s node %s %s=%s", verb("label", "labelled"), m.node, l.key, l.value)
		if l.present {
			msg += " (was " + strconv.Quote(l.was) + ")"
		}
		out = append(out, msg)
	}
	for _, k := range m.dropLabels {
		out = append(out, fmt.Sprintf("%s label %s from node %s (no longer in the inventory)", verb("remove", "removed"), k, m.node))
	}
	for _, t := range m.setTaints {
		msg := fmt.Sprintf("%s node %s %s", verb("taint", "tainted"), m.node, t.taint)
		if t.present {
			msg += " (was " + strconv.Quote(t.was) + ")"
		}
		out = append(out, msg)
	}
	for _, t := range m.dropTaints {
		out = append(out, fmt.Sprintf("%s taint %s from node %s (no longer in the inventory)", verb("remove", "removed"), t, m.node))
	}
	for _, a := range m.sortedAnnotations() {
		v := m.annotations[a]
		if v == "" {
			out = append(out, fmt.Sprintf("%s annotation %s from node %s (cargoship manages none)", verb("remove", "removed"), a, m.node))
			continue
		}
		out = append(out, fmt.Sprintf("%s node %s %s=%s (what cargoship manages)", verb("annotate", "annotated"), m.node, a, v))
	}
	return out
}
