package provider

import (
	"context"
	"maps"
	"os"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// leavingHosts are the hosts the state has in the cluster that the plan
// takes out: set absent, or gone from the hosts map.
func leavingHosts(prior, planned map[string]hostModel) []string {
	var out []string
	for k, h := range prior {
		if !present(h) {
			continue
		}
		if p, ok := planned[k]; !ok || !present(p) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// removalInventory is the document a removal runs on: the hosts staying,
// and the leaving ones as the plan (or, when they left the map, the
// state) describes them; targets are the leaving hosts' node names.
func removalInventory(ctx context.Context, m *clusterModel, planned, prior map[string]hostModel, leaving []string) (*inventory, []string, diag.Diagnostics) {
	all := maps.Clone(planned)
	for _, k := range leaving {
		if _, ok := all[k]; !ok {
			all[k] = prior[k]
		}
	}
	inv, _, diags := buildInventory(ctx, m, all, func(k string, h hostModel) bool {
		return present(h) || slices.Contains(leaving, k)
	})
	if diags.HasError() {
		return nil, nil, diags
	}
	targets := make([]string, 0, len(leaving))
	for _, k := range leaving {
		targets = append(targets, inv.Names[k])
	}
	return inv, targets, diags
}

// mustMap rebuilds a hosts map value of the same element type.
func mustMap(like types.Map, hosts map[string]hostModel) types.Map {
	v, _ := types.MapValueFrom(context.Background(), like.ElementType(context.Background()), hosts)
	return v
}

// packageIfPresent is the state's package when it is still on disk, so a
// destroy removes its files too; without it the hosts' engine is reset.
func packageIfPresent(m clusterModel) string {
	p := m.Package.ValueString()
	if p == "" {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
