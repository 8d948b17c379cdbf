package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/goccy/go-yaml"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// inventory is the cluster document a resource stands for: the same
// document `cargoship apply --config` reads, built in memory.
type inventory struct {
	// Data is the document (JSON, which the YAML loader reads).
	Data []byte
	// Keys[i] is the hosts key of spec.hosts[i], so a finding about the
	// document names the attribute it came from.
	Keys []string
	// Names are the node names by hosts key.
	Names map[string]string
}

// hostsOf decodes the hosts map; ok is false while it is unknown.
func hostsOf(ctx context.Context, m types.Map) (map[string]hostModel, bool, diag.Diagnostics) {
	if m.IsUnknown() || m.IsNull() {
		return nil, false, nil
	}
	hosts := map[string]hostModel{}
	diags := m.ElementsAs(ctx, &hosts, false)
	return hosts, !diags.HasError(), diags
}

// orderedKeys is the run's host order (docs/provider.md, "Host order"):
// controllers first, each group by key, so the controller whose key sorts
// first is the leader.
func orderedKeys(hosts map[string]hostModel) []string {
	keys := make([]string, 0, len(hosts))
	for k := range hosts {
		keys = append(keys, k)
	}
	isController := func(k string) bool {
		h := v1alpha1.Host{Role: hosts[k].Role.ValueString()}
		return h.IsController()
	}
	sort.Slice(keys, func(i, j int) bool {
		ci, cj := isController(keys[i]), isController(keys[j])
		if ci != cj {
			return ci
		}
		return keys[i] < keys[j]
	})
	return keys
}

// present reports whether a host is meant to be in the cluster.
func present(h hostModel) bool {
	return h.State.IsNull() || h.State.IsUnknown() || h.State.ValueString() == statePresent
}

// buildInventory makes the document for the hosts include keeps; known is
// false while a value it needs is not known yet (a plan before the hosts
// exist), and then there is no document.
func buildInventory(ctx context.Context, m *clusterModel, hosts map[string]hostModel, include func(string, hostModel) bool) (inv *inventory, known bool, diags diag.Diagnostics) {
	if m.Name.IsUnknown() || m.LoadBalancer.IsUnknown() || m.Config.IsUnknown() {
		return nil, false, nil
	}
	config, d := configOf(m)
	if diags.Append(d...); diags.HasError() {
		return nil, true, diags
	}
	inv = &inventory{Names: map[string]string{}}
	var list []v1alpha1.Host
	for _, k := range orderedKeys(hosts) {
		h := hosts[k]
		if !include(k, h) {
			continue
		}
		spec, ok, d := hostSpec(ctx, k, h)
		if diags.Append(d...); !ok || diags.HasError() {
			return nil, ok, diags
		}
		inv.Keys = append(inv.Keys, k)
		inv.Names[k] = spec.Hostname
		list = append(list, spec)
	}
	if list == nil {
		list = []v1alpha1.Host{}
	}
	doc := map[string]any{
		"apiVersion": v1alpha1.GroupVersion,
		"kind":       v1alpha1.KindCluster,
		"metadata":   map[string]any{"name": m.Name.ValueString()},
		"spec":       map[string]any{"config": config, "hosts": list},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		diags.AddError("Building the cluster document", err.Error())
		return nil, true, diags
	}
	inv.Data = data
	return inv, true, diags
}

// configOf is spec.config: the config attribute's mapping with the load
// balancer set in it.
func configOf(m *clusterModel) (map[string]any, diag.Diagnostics) {
	var diags diag.Diagnostics
	config := map[string]any{}
	if s := m.Config.ValueString(); s != "" {
		if err := yaml.Unmarshal([]byte(s), &config); err != nil {
			addAttributeDiag(&diags, false, path.Root("config"), "config is not a YAML mapping", "config: "+yamlMessage(err))
			return nil, diags
		}
		if config == nil {
			config = map[string]any{}
		}
	}
	lb := m.LoadBalancer.ValueString()
	if v, ok := config["loadbalancer"]; ok && fmt.Sprint(v) != lb {
		addAttributeDiag(&diags, false, path.Root("config"), "config sets a different loadbalancer",
			fmt.Sprintf("config's loadbalancer is %v and load_balancer is %q: set it in load_balancer only", v, lb))
		return nil, diags
	}
	config["loadbalancer"] = lb
	return config, diags
}

// hostSpec is one host's spec.hosts entry; ok is false while a value is
// unknown.
func hostSpec(ctx context.Context, key string, h hostModel) (v1alpha1.Host, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	at := path.Root("hosts").AtMapKey(key)
	for _, v := range []interface{ IsUnknown() bool }{h.Address, h.Port, h.User, h.KeyPath, h.HostKey, h.Hostname,
		h.PrivateAddress, h.PrivateInterface, h.Role, h.Profile, h.State, h.SudoPasswordEnv, h.Labels, h.Taints, h.Environment} {
		if v.IsUnknown() {
			return v1alpha1.Host{}, false, nil
		}
	}
	if s := h.State.ValueString(); s != "" && !slices.Contains([]string{statePresent, stateAbsent}, s) {
		diags.AddAttributeError(at.AtName("state"), "Invalid host state", fmt.Sprintf("state is %q: use %q or %q", s, statePresent, stateAbsent))
		return v1alpha1.Host{}, true, diags
	}
	spec := v1alpha1.Host{
		SSH:              sshSpec(&sshModel{Address: h.Address, Port: h.Port, User: h.User, KeyPath: h.KeyPath, HostKey: h.HostKey}),
		Hostname:         h.Hostname.ValueString(),
		PrivateAddress:   h.PrivateAddress.ValueString(),
		PrivateInterface: h.PrivateInterface.ValueString(),
		Role:             h.Role.ValueString(),
		Profile:          h.Profile.ValueString(),
		SudoPasswordEnv:  h.SudoPasswordEnv.ValueString(),
	}
	if spec.Hostname == "" {
		spec.Hostname = key
	}
	if h.Bastion != nil {
		if h.Bastion.Address.IsUnknown() || h.Bastion.Port.IsUnknown() || h.Bastion.KeyPath.IsUnknown() {
			return v1alpha1.Host{}, false, nil
		}
		spec.SSH.Bastion = sshSpec(h.Bastion)
	}
	diags.Append(h.Labels.ElementsAs(ctx, &spec.Labels, false)...)
	diags.Append(h.Environment.ElementsAs(ctx, &spec.Environment, false)...)
	diags.Append(h.Taints.ElementsAs(ctx, &spec.Taints, false)...)
	return spec, true, diags
}

// sshSpec is an ssh connection of the inventory.
func sshSpec(s *sshModel) *v1alpha1.SSH {
	return &v1alpha1.SSH{
		Address: s.Address.ValueString(),
		Port:    int(s.Port.ValueInt64()),
		User:    s.User.ValueString(),
		KeyPath: s.KeyPath.ValueString(),
		HostKey: s.HostKey.ValueString(),
	}
}
