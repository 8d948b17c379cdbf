package engine

import (
	"reflect"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Registration is what a node's engine config gives it when the node
// registers: its labels and taints. A node that is already registered
// does not pick up a change to either (docs/reference/engines.md 3.4), so
// they are set through the API on running nodes (phase 29).
type Registration struct {
	Labels map[string]string
	Taints []Taint
}

// Taint is one node taint; Key and Effect identify it on a node.
type Taint struct {
	Key, Value, Effect string
}

// ID is the taint as kubectl taint names one to remove: key:Effect.
func (t Taint) ID() string { return t.Key + ":" + t.Effect }

// String is the taint as node-taint and kubectl taint write it.
func (t Taint) String() string {
	if t.Value == "" {
		return t.ID()
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// ParseTaint reads key[=value]:Effect.
func ParseTaint(s string) (Taint, error) {
	t, err := parseTaint(s)
	return Taint{Key: t.key, Value: t.value, Effect: t.effect}, err
}

// registrar is an engine that renders labels and taints into a node's
// config.
type registrar interface {
	registration(cfg map[string]any, h *v1alpha1.Host) ([]string, []string, error)
}

// RegistrationOf is what e's config gives host h's node at registration,
// as Render writes it; empty for an engine that writes none.
func RegistrationOf(e Engine, c *v1alpha1.Cluster, d *v1alpha1.Distro, h *v1alpha1.Host) (Registration, error) {
	r, ok := e.(registrar)
	if !ok {
		return Registration{}, nil
	}
	lbls, tnts, err := r.registration(HostConfig(c, d, h), h)
	if err != nil {
		return Registration{}, err
	}
	out := Registration{Labels: map[string]string{}}
	for _, kv := range lbls {
		k, v, _ := strings.Cut(kv, "=")
		out.Labels[k] = v
	}
	for _, s := range tnts {
		t, err := ParseTaint(s)
		if err != nil {
			return Registration{}, err
		}
		out.Taints = append(out.Taints, t)
	}
	sort.Slice(out.Taints, func(i, j int) bool { return out.Taints[i].String() < out.Taints[j].String() })
	return out, nil
}

// registration implements registrar: node-label and node-taint of the
// host's config with the host's own, as Render merges them.
func (r *rancher) registration(cfg map[string]any, h *v1alpha1.Host) ([]string, []string, error) {
	lbls, err := labels(stringList(cfg["node-label"]), h.Labels)
	if err != nil {
		return nil, nil, err
	}
	tnts, err := taints(stringList(cfg["node-taint"]), h.Taints)
	return lbls, tnts, err
}

// registration implements registrar: the host's labels (the kubelet's
// node-labels) and taints. kubeadm's own control-plane taint is kubeadm's,
// not the inventory's.
func (u *upstream) registration(_ map[string]any, h *v1alpha1.Host) ([]string, []string, error) {
	lbls, err := labels(nil, h.Labels)
	if err != nil {
		return nil, nil, err
	}
	tnts, err := taints(nil, h.Taints)
	return lbls, tnts, err
}

// registrationKeys are the config keys k3s and rke2 read only when a node
// registers (docs/reference/engines.md 3.4).
var registrationKeys = []string{"node-label", "node-taint"}

// OnlyRegistrationDiffers says have and want, two contents of e's config
// file, differ in nothing but the keys read at registration: writing want
// over have then needs no restart, which would apply nothing.
func OnlyRegistrationDiffers(e Engine, have, want []byte) bool {
	if _, ok := e.(*rancher); !ok {
		return false
	}
	var a, b map[string]any
	if yaml.Unmarshal(have, &a) != nil || yaml.Unmarshal(want, &b) != nil {
		return false
	}
	for _, m := range []*map[string]any{&a, &b} {
		if *m == nil {
			*m = map[string]any{}
		}
		for _, k := range registrationKeys {
			delete(*m, k)
			delete(*m, k+"+")
		}
	}
	return reflect.DeepEqual(a, b)
}
