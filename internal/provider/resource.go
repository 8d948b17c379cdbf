package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// clusterResource is cargoship_cluster.
type clusterResource struct{ r *runner }

var (
	_ resource.ResourceWithModifyPlan  = &clusterResource{}
	_ resource.ResourceWithImportState = &clusterResource{}
)

func newClusterResource() resource.Resource { return &clusterResource{} }

// Metadata implements resource.Resource.
func (c *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

// Schema implements resource.Resource.
func (c *clusterResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clusterSchema()
}

// Configure implements resource.ResourceWithConfigure.
func (c *clusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return // the provider is not configured yet (validate)
	}
	r, ok := req.ProviderData.(*runner)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("%T", req.ProviderData))
		return
	}
	c.r = r
}

// Create implements resource.Resource: `cargoship apply` of the present
// hosts. A failed create saves no state: apply is idempotent, so the next
// apply continues where this one stopped.
func (c *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	hosts, _, d := hostsOf(ctx, plan.Hosts)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	if !c.apply(ctx, &plan, hosts, plan.timeout(&resp.Diagnostics, "create"), &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

// Update implements resource.Resource: the hosts leaving are reset first,
// with the refusals `cargoship reset --target-hosts` makes, then the rest
// are applied.
func (c *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	hosts, _, d := hostsOf(ctx, plan.Hosts)
	resp.Diagnostics.Append(d...)
	priorHosts, _, d := hostsOf(ctx, prior.Hosts)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	timeout := plan.timeout(&resp.Diagnostics, "update")
	leaving := leavingHosts(priorHosts, hosts)
	if len(leaving) > 0 {
		if !c.removeHosts(ctx, &plan, hosts, priorHosts, leaving, timeout, &resp.Diagnostics) {
			resp.Diagnostics.Append(resp.State.Set(ctx, failedState(prior, priorHosts, nil))...)
			return
		}
	}
	if !c.apply(ctx, &plan, hosts, timeout, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, failedState(prior, priorHosts, leaving))...)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

// Delete implements resource.Resource: `cargoship reset` of every host.
func (c *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	st, _, inv, d := stateInventory(ctx, req.State)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() || inv == nil {
		return
	}
	rep, err := c.r.do(ctx, run{model: &st, inv: inv, pkgPath: packageIfPresent(st), engine: st.Engine.ValueString(),
		phases: action.ResetPhases(), timeout: st.timeout(&resp.Diagnostics, "delete")})
	logReport(ctx, "reset", rep)
	if err != nil {
		addRunError(&resp.Diagnostics, inv, "reset", err)
	}
}

// apply runs `cargoship apply` over the present hosts and fills the
// computed attributes from what the hosts then say.
func (c *clusterResource) apply(ctx context.Context, m *clusterModel, hosts map[string]hostModel, timeout time.Duration, diags *diag.Diagnostics) bool {
	inv, _, d := buildInventory(ctx, m, hosts, func(_ string, h hostModel) bool { return present(h) })
	if diags.Append(d...); diags.HasError() {
		return false
	}
	m.ID = m.Name
	if len(inv.Keys) == 0 {
		return c.observe(ctx, m, hosts, inv, diags) // every host was taken out
	}
	rep, err := c.r.do(ctx, run{model: m, inv: inv, pkgPath: m.Package.ValueString(), phases: action.ApplyPhases(), timeout: timeout})
	logReport(ctx, "apply", rep)
	if err != nil {
		addRunError(diags, inv, "apply", err)
		return false
	}
	return c.observe(ctx, m, hosts, inv, diags)
}

// removeHosts resets the leaving hosts out of the cluster. They are kept
// in the document for the run, as reset needs them there.
func (c *clusterResource) removeHosts(ctx context.Context, m *clusterModel, hosts, priorHosts map[string]hostModel, leaving []string, timeout time.Duration, diags *diag.Diagnostics) bool {
	inv, targets, d := removalInventory(ctx, m, hosts, priorHosts, leaving)
	if diags.Append(d...); diags.HasError() {
		return false
	}
	rep, err := c.r.do(ctx, run{model: m, inv: inv, pkgPath: m.Package.ValueString(), phases: action.ResetPhases(), targets: targets, timeout: timeout})
	logReport(ctx, "reset", rep)
	if err != nil {
		addRunError(diags, inv, "reset --target-hosts", err)
		return false
	}
	return true
}

// failedState is what an update that failed leaves in the state: the
// prior state, with the hosts a removal took out marked absent, and no
// package digest, so the next plan runs the apply again.
func failedState(prior clusterModel, priorHosts map[string]hostModel, removed []string) clusterModel {
	prior.PackageSHA256 = types.StringValue("")
	for _, k := range removed {
		if h, ok := priorHosts[k]; ok {
			h.State = types.StringValue(stateAbsent)
			priorHosts[k] = h
		}
	}
	if len(removed) > 0 {
		prior.Hosts = mustMap(prior.Hosts, priorHosts)
	}
	return prior
}

// logReport puts a run's changes in the provider's log.
func logReport(ctx context.Context, what string, rep *node.Report) {
	if rep == nil {
		return
	}
	changes := rep.Changes()
	tflog.Info(ctx, "cargoship "+what+" finished", map[string]any{"changes": len(changes), "bytes_uploaded": rep.BytesUploaded()})
	for _, ch := range changes {
		tflog.Info(ctx, ch.What, map[string]any{"host": ch.Host, "phase": ch.Phase})
	}
}

// timeout is an operation's bound from the timeouts attribute.
func (m *clusterModel) timeout(diags *diag.Diagnostics, op string) time.Duration {
	if m.Timeouts == nil {
		return 0
	}
	v := map[string]types.String{"create": m.Timeouts.Create, "update": m.Timeouts.Update, "delete": m.Timeouts.Delete}[op]
	if v.IsNull() || v.ValueString() == "" {
		return 0
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil || d < 0 {
		diags.AddAttributeError(path.Root("timeouts").AtName(op), "Invalid timeout", fmt.Sprintf("%q is not a duration such as \"45m\"", v.ValueString()))
		return 0
	}
	return d
}

// ImportState implements resource.ResourceWithImportState: the id is an
// inventory file's path.
func (c *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	m, d := importInventory(ctx, req.ID)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// stateInventory is a state's model, its hosts and the document of its
// present hosts; the document is nil when no host is present.
func stateInventory(ctx context.Context, state tfsdk.State) (clusterModel, map[string]hostModel, *inventory, diag.Diagnostics) {
	var m clusterModel
	diags := state.Get(ctx, &m)
	if diags.HasError() {
		return m, nil, nil, diags
	}
	hosts, _, d := hostsOf(ctx, m.Hosts)
	if diags.Append(d...); diags.HasError() {
		return m, nil, nil, diags
	}
	inv, _, d := buildInventory(ctx, &m, hosts, func(_ string, h hostModel) bool { return present(h) })
	if diags.Append(d...); diags.HasError() || len(inv.Keys) == 0 {
		return m, hosts, nil, diags
	}
	return m, hosts, inv, diags
}
