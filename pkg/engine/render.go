package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Modes of rendered files: everything cargoship writes for the engine is
// root-only, whether or not it holds a secret.
const (
	modePrivate = 0o600
	modePublic  = 0o644
)

// marshalYAML renders v with sorted keys, two-space indents and literal
// blocks for multi-line strings, and no leading "---": the same input
// always gives the same bytes.
func marshalYAML(v any) ([]byte, error) {
	return yaml.MarshalWithOptions(v,
		yaml.Indent(2),
		yaml.IndentSequence(true),
		yaml.UseLiteralStyleIfMultiline(true),
	)
}

// document prepends apiVersion and kind to body, keeping ones body sets.
func document(apiVersion, kind string, body map[string]any) map[string]any {
	out := cloneMap(body)
	if _, ok := out["apiVersion"]; !ok {
		out["apiVersion"] = apiVersion
	}
	if _, ok := out["kind"]; !ok {
		out["kind"] = kind
	}
	return out
}

// cloneMap deep-copies a decoded YAML mapping, so rendering one host never
// changes the documents every host shares.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cloneMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return append([]string(nil), t...)
	}
	return v
}

// merge lays over on top of base, the way the engines read config files:
// a key's last value wins (lists are replaced), and a key written "key+"
// appends to the list or string base holds under "key". Nested mappings
// merge key by key (kubeadm documents).
func merge(base, over map[string]any) map[string]any {
	out := cloneMap(base)
	for k, v := range over {
		if name, ok := strings.CutSuffix(k, "+"); ok {
			out[name] = appendValue(out[name], cloneValue(v))
			continue
		}
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = merge(bm, om)
			continue
		}
		out[k] = cloneValue(v)
	}
	return out
}

// appendValue appends v to base: lists concatenate, strings join with a
// comma as the engines' own "+" does.
func appendValue(base, v any) any {
	if base == nil {
		return v
	}
	if s, ok := base.(string); ok {
		if vs, ok := v.(string); ok {
			return s + "," + vs
		}
	}
	return append(toList(base), toList(v)...)
}

func toList(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	return []any{v}
}

// stringList reads a config value that may be one string or a list of
// strings, as engine flags that repeat may be written either way.
func stringList(v any) []string {
	var out []string
	for _, e := range toList(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// splitList reads a list value whose items may themselves be
// comma-separated, as cluster-cidr: 10.42.0.0/16,fd00:42::/56 is.
func splitList(v any) []string {
	var out []string
	for _, s := range stringList(v) {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// sortedUnique sorts and removes duplicates and empty strings.
func sortedUnique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func anyList(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

// profileFor returns the cluster profile a host names, or nil: a profile
// that only restates the role (the default) need not be defined.
func profileFor(c *v1alpha1.Cluster, h *v1alpha1.Host) *v1alpha1.Profile {
	if h.Profile == "" {
		return nil
	}
	for i := range c.Spec.Config.Profiles {
		if c.Spec.Config.Profiles[i].Name == h.Profile {
			return &c.Spec.Config.Profiles[i]
		}
	}
	return nil
}

// HostConfig is a host's engine config: the distro's engine.config with
// the engineConfig of the profile the host names laid over it (see merge:
// a profile key replaces the distro's, "key+" appends to it). It is what
// Ports and Network read for a host; Render adds the per-host keys.
func HostConfig(c *v1alpha1.Cluster, d *v1alpha1.Distro, h *v1alpha1.Host) map[string]any {
	cfg := cloneMap(d.Spec.Config.Engine.Config)
	if p := profileFor(c, h); p != nil {
		cfg = merge(cfg, p.EngineConfig)
	}
	return cfg
}

// node is what every engine needs about the host being rendered.
type node struct {
	name       string
	ip         string
	controller bool
	founder    bool
	profile    *v1alpha1.Profile
}

// checkInput validates what every engine's Render needs and resolves the
// host's identity. The earlier tool rendered an empty node-name; a missing
// name or address is an error here.
func checkInput(in RenderInput, e Engine) (node, error) {
	switch {
	case in.Cluster == nil:
		return node{}, errors.New("render: no cluster")
	case in.Distro == nil:
		return node{}, errors.New("render: no distro")
	case in.Host == nil:
		return node{}, errors.New("render: no host")
	case in.Leader == nil:
		return node{}, errors.New("render: no leader: the cluster needs a controller to found it")
	}
	if in.Distro.Spec.Type != e.Name() {
		return node{}, fmt.Errorf("render: distro type %q given to the %s engine", in.Distro.Spec.Type, e.Name())
	}
	n := node{
		name:       in.NodeName,
		ip:         in.Host.PrivateAddress,
		controller: in.Host.IsController(),
		profile:    profileFor(in.Cluster, in.Host),
	}
	if n.name == "" {
		n.name = in.Host.Hostname
	}
	host := in.Host.Name()
	if n.name == "" {
		return node{}, fmt.Errorf("%s: no node name: set hostname in the inventory or pass the discovered one", host)
	}
	if n.ip == "" {
		return node{}, fmt.Errorf("%s: no private address: the engine's node-ip comes from it", host)
	}
	if !in.Leader.IsController() {
		return node{}, fmt.Errorf("%s: leader %s is not a controller", host, in.Leader.Name())
	}
	n.founder = in.Host == in.Leader || in.Host.PrivateAddress == in.Leader.PrivateAddress
	if !n.founder && in.JoinAddress == "" {
		return node{}, fmt.Errorf("%s: no join address: every node but the founder joins through one", host)
	}
	return n, nil
}

// tlsSANs is every name the API server certificate must carry: the load
// balancer, the VIP, and every controller's address and hostname, plus
// extra. The VIP is named even when the load balancer is a DNS name that
// resolves to it: a client dialling the bare address must verify too.
func tlsSANs(c *v1alpha1.Cluster, extra []string) []string {
	sans := append([]string{c.Spec.Config.Loadbalancer}, extra...)
	if vip := c.Spec.Config.VIP; vip != nil {
		sans = append(sans, vip.IP())
	}
	for _, h := range c.Spec.Hosts {
		if h.IsController() {
			sans = append(sans, h.PrivateAddress, h.Hostname)
		}
	}
	return sortedUnique(sans)
}

// labels merges node-label entries ("k=v") with the host's labels, the
// host winning on the same key, sorted by key.
func labels(existing []string, host map[string]string) ([]string, error) {
	m := map[string]string{}
	for _, kv := range existing {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for k, v := range host {
		if k == "" || strings.ContainsAny(k, "=, \t\n") || strings.ContainsAny(v, ", \t\n") {
			return nil, fmt.Errorf("label %q=%q: keys and values may not hold '=', ',' or spaces", k, v)
		}
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if err := kubeletMaySet(k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return out, nil
}

// kubeletLabels are the kubernetes.io labels a kubelet may set on its own
// node; any other label in that namespace makes it refuse to start
// (k3s-io/k3s#10916). Role labels are set through the API instead
// (phase 29).
var kubeletLabels = keySet(
	"beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
	"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
	"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
	"node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
)

func kubeletMaySet(key string) error {
	domain, _, ok := strings.Cut(key, "/")
	if !ok || kubeletLabels[key] {
		return nil
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if domain != ns && !strings.HasSuffix(domain, "."+ns) {
			continue
		}
		for _, allowed := range []string{"kubelet.kubernetes.io", "node.kubernetes.io"} {
			if domain == allowed || strings.HasSuffix(domain, "."+allowed) {
				return nil
			}
		}
		return fmt.Errorf("label %s: a kubelet may not set %s labels on its node and would not start; node roles are labelled through the API (--label-nodes)", key, ns)
	}
	return nil
}

// taint is one parsed "key[=value]:Effect".
type taint struct{ key, value, effect string }

func parseTaint(s string) (taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	k, v, _ := strings.Cut(kv, "=")
	switch {
	case !ok || k == "":
		return taint{}, fmt.Errorf("taint %q is not key=value:Effect", s)
	case effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute":
		return taint{}, fmt.Errorf("taint %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
	case strings.ContainsAny(s, ", \t\n"):
		return taint{}, fmt.Errorf("taint %q may not hold ',' or spaces", s)
	}
	return taint{key: k, value: v, effect: effect}, nil
}

// taints merges node-taint entries with the host's, checked and sorted.
func taints(existing, host []string) ([]string, error) {
	all := append(append([]string(nil), existing...), host...)
	for _, t := range host {
		if _, err := parseTaint(t); err != nil {
			return nil, err
		}
	}
	return sortedUnique(all), nil
}
