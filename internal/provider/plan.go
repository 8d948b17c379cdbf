package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

var pathPackage = path.Root("package")

// ModifyPlan implements resource.ResourceWithModifyPlan. It tracks the
// package's digest, checks the document as `cargoship validate` does
// (attribute paths for file:line), and, when the plan changes anything,
// runs the read-only phases and shows per host what the apply (and a
// removal before it) will do.
func (c *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		c.planDestroy(ctx, req, resp)
		return
	}
	var plan clusterModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	var prior *clusterModel
	if !req.State.Raw.IsNull() {
		prior = &clusterModel{}
		if resp.Diagnostics.Append(req.State.Get(ctx, prior)...); resp.Diagnostics.HasError() {
			return
		}
	}
	changed := prior == nil || !req.Plan.Raw.Equal(req.State.Raw)
	hosts, hostsKnown, d := hostsOf(ctx, plan.Hosts)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	for _, op := range []string{"create", "update", "delete"} {
		plan.timeout(&resp.Diagnostics, op)
	}
	if !plan.Package.IsUnknown() && c.r != nil {
		facts, err := readPackage(plan.Package.ValueString(), c.r.trust)
		if err != nil {
			resp.Diagnostics.AddAttributeError(pathPackage, "Package", err.Error())
			return
		}
		plan.PackageSHA256, plan.Engine = types.StringValue(facts.SHA256), types.StringValue(facts.Engine)
		if prior != nil && prior.PackageSHA256.ValueString() != facts.SHA256 {
			changed = true
			plan.Version = types.StringUnknown()
		}
	}
	if changed {
		plan.Nodes = types.ListUnknown(nodeType)
		plan.Kubeconfig = types.StringUnknown()
		if prior == nil {
			plan.Version = types.StringUnknown()
		}
	}
	if hostsKnown {
		inv, known, d := buildInventory(ctx, &plan, hosts, func(_ string, h hostModel) bool { return present(h) })
		if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
			return
		}
		if known && len(inv.Keys) > 0 {
			_, fs, _ := v1alpha1.ParseCluster("cargoship_cluster", inv.Data)
			addFindings(&resp.Diagnostics, inv, fs)
			if !resp.Diagnostics.HasError() && changed && c.r != nil && !plan.Package.IsUnknown() {
				c.planRuns(ctx, &plan, prior, hosts, inv, &resp.Diagnostics)
			}
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// planRuns dry-runs what the change will run: the removal of the leaving
// hosts, with its refusals, then the apply of the rest.
func (c *clusterResource) planRuns(ctx context.Context, plan, prior *clusterModel, hosts map[string]hostModel, inv *inventory, diags *diag.Diagnostics) {
	phases := action.ApplyPhases()
	if prior != nil {
		priorHosts, _, d := hostsOf(ctx, prior.Hosts)
		diags.Append(d...)
		if leaving := leavingHosts(priorHosts, hosts); len(leaving) > 0 {
			rinv, targets, d := removalInventory(ctx, plan, hosts, priorHosts, leaving)
			if diags.Append(d...); diags.HasError() {
				return
			}
			rep, err := c.r.do(ctx, run{model: plan, inv: rinv, pkgPath: plan.Package.ValueString(), phases: action.ResetPhases(), targets: targets, dry: true})
			if err != nil {
				addRunError(diags, rinv, "reset --target-hosts (dry run)", err)
				return
			}
			diags.AddWarning("cargoship will take hosts out of the cluster", describeChanges(rep))
			phases = action.ApplyAfterReset()
		}
	}
	rep, err := c.r.do(ctx, run{model: plan, inv: inv, pkgPath: plan.Package.ValueString(), phases: phases, dry: true})
	if err != nil {
		addRunError(diags, inv, "apply (dry run)", err)
		return
	}
	if text := describeChanges(rep); len(rep.Changes()) > 0 {
		diags.AddWarning("cargoship apply will change the hosts", text)
	}
}

// planDestroy shows what a destroy resets.
func (c *clusterResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if c.r == nil || req.State.Raw.IsNull() {
		return
	}
	st, _, inv, d := stateInventory(ctx, req.State)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() || inv == nil {
		return
	}
	rep, err := c.r.do(ctx, run{model: &st, inv: inv, pkgPath: packageIfPresent(st), engine: st.Engine.ValueString(), phases: action.ResetPhases(), dry: true})
	if err != nil {
		addRunError(&resp.Diagnostics, inv, "reset (dry run)", err)
		return
	}
	resp.Diagnostics.AddWarning("cargoship reset will uninstall every host", describeChanges(rep))
}
