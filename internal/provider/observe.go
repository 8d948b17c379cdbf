package provider

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// observe fills the computed attributes after a create or update from what
// the hosts say: the nodes, the version, the kubeconfig.
func (c *clusterResource) observe(ctx context.Context, m *clusterModel, hosts map[string]hostModel, inv *inventory, diags *diag.Diagnostics) bool {
	m.Nodes = types.ListValueMust(nodeType, nil)
	m.Kubeconfig = types.StringNull()
	if len(inv.Keys) == 0 {
		m.Version = types.StringValue("")
		return true
	}
	facts, err := readPackage(m.Package.ValueString(), c.r.trust)
	if err != nil {
		diags.AddAttributeError(pathPackage, "Package", err.Error())
		return false
	}
	m.Version, m.Engine, m.PackageSHA256 = types.StringValue(facts.Version), types.StringValue(facts.Engine), types.StringValue(facts.SHA256)
	st, err := c.r.refresh(ctx, run{model: m, inv: inv, engine: facts.Engine})
	if err != nil {
		addRunError(diags, inv, "refresh", err)
		return false
	}
	m.Nodes = nodesValue(st, hosts, inv)
	if m.ExportKubeconfig.ValueBool() {
		if !c.kubeconfig(ctx, m, inv, facts.Engine, diags) {
			return false
		}
	}
	return true
}

// kubeconfig reads the admin kubeconfig from the first controller whose
// engine runs, as `cargoship kube-config` does.
func (c *clusterResource) kubeconfig(ctx context.Context, m *clusterModel, inv *inventory, engineName string, diags *diag.Diagnostics) bool {
	l, err := action.Load(ctx, c.r.options(ctx, run{model: m, inv: inv, engine: engineName}))
	if err != nil {
		addRunError(diags, inv, "kube-config", err)
		return false
	}
	defer func() { _ = l.Close() }()
	data, err := action.ClusterKubeconfig(ctx, l.State.Cluster, l.State.Engine, host.ConnectOptions{LookupEnv: c.r.env})
	if err != nil {
		addRunError(diags, inv, "kube-config", err)
		return false
	}
	m.Kubeconfig = types.StringValue(string(data))
	return true
}

// nodesValue is the nodes attribute: the cluster's nodes, each with the
// role its host has in hosts.
func nodesValue(st *action.Status, hosts map[string]hostModel, inv *inventory) types.List {
	roles := map[string]string{}
	for k, name := range inv.Names {
		roles[name] = hosts[k].Role.ValueString()
	}
	nodes := append([]nodeStatus(nil), nodeStatuses(st)...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].name < nodes[j].name })
	vals := make([]nodeModel, 0, len(nodes))
	for _, n := range nodes {
		vals = append(vals, nodeModel{Name: types.StringValue(n.name), Role: types.StringValue(roles[n.name]),
			Version: types.StringValue(n.version), Ready: types.BoolValue(n.ready)})
	}
	v, _ := types.ListValueFrom(context.Background(), nodeType, vals)
	return v
}

type nodeStatus struct {
	name, version string
	ready         bool
}

func nodeStatuses(st *action.Status) []nodeStatus {
	out := make([]nodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		out = append(out, nodeStatus{name: n.Name, version: n.KubeletVersion, ready: n.Ready})
	}
	return out
}

// Read implements resource.Resource: it refreshes from the hosts, so drift
// shows in the next plan. A host of the state whose engine is gone, or
// whose node left the cluster, reads as absent (the plan then puts it
// back); hosts running another engine version than the state's lose the
// package digest (the plan then applies the package again).
func (c *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, hosts, inv, d := stateInventory(ctx, req.State)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() || inv == nil {
		return
	}
	st, err := c.r.refresh(ctx, run{model: &m, inv: inv, engine: m.Engine.ValueString()})
	if err != nil {
		addRunError(&resp.Diagnostics, inv, "refresh", err)
		return
	}
	drift(&m, hosts, inv, st)
	m.Hosts = mustMap(m.Hosts, hosts)
	m.Nodes = nodesValue(st, hosts, inv)
	if m.Engine.IsNull() || m.Engine.ValueString() == "" {
		m.Engine = types.StringValue(st.Engine)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// drift marks in the model what the hosts say differs from it.
func drift(m *clusterModel, hosts map[string]hostModel, inv *inventory, st *action.Status) {
	inCluster := map[string]bool{}
	for _, n := range st.Nodes {
		inCluster[n.Name] = true
	}
	want, wantErr := engine.ParseVersion(m.Version.ValueString())
	var moved []string
	for _, k := range inv.Keys {
		name := inv.Names[k]
		hs := st.Hosts[name]
		if hs.Version == "" || !inCluster[name] {
			h := hosts[k]
			h.State = types.StringValue(stateAbsent)
			hosts[k] = h
			continue
		}
		have, err := engine.ParseVersion(hs.Version)
		if wantErr != nil || err != nil || engine.Compare(have, want) != 0 {
			moved = append(moved, name+" runs "+hs.Version)
		}
	}
	if len(moved) > 0 {
		sort.Strings(moved)
		m.Version = types.StringValue(strings.Join(moved, ", "))
		m.PackageSHA256 = types.StringValue("")
	}
}
