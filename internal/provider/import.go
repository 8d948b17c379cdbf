package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// importInventory makes a resource's state from an inventory file: its
// hosts keyed by hostname, its spec.config but the load balancer and the
// inline registry secrets as the config attribute. The package is not in
// an inventory; the next apply sets it (and converges: nothing changes on
// a cluster already there).
func importInventory(ctx context.Context, file string) (clusterModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	c, _, err := v1alpha1.LoadClusterFile(file)
	if err != nil {
		diags.AddError("Importing "+file, err.Error())
		return clusterModel{}, diags
	}
	config, dropped, err := rawConfig(file)
	if err != nil {
		diags.AddError("Importing "+file, err.Error())
		return clusterModel{}, diags
	}
	if len(dropped) > 0 {
		diags.AddWarning("Secrets left out of the imported state",
			"The import did not copy "+strings.Join(dropped, ", ")+" into the state. Set them in config, "+
				"or better name an environment variable in auth.passEnv, which keeps the password out of the state; "+
				"the first plan after the import shows config as changed.")
	}
	hosts := map[string]hostModel{}
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		if h.SSH == nil {
			diags.AddError("Importing "+file, fmt.Sprintf("spec.hosts[%d] (%s) connects without ssh: the provider reaches hosts over ssh only", i, h.Name()))
			continue
		}
		key := h.Name()
		if _, dup := hosts[key]; dup {
			diags.AddError("Importing "+file, fmt.Sprintf("spec.hosts[%d]: a second host named %s; give each a hostname", i, key))
			continue
		}
		hosts[key] = importHost(ctx, h, &diags)
	}
	if diags.HasError() {
		return clusterModel{}, diags
	}
	m := clusterModel{
		ID: types.StringValue(c.Metadata.Name), Name: types.StringValue(c.Metadata.Name),
		LoadBalancer: types.StringValue(c.Spec.Config.Loadbalancer),
		Package:      types.StringNull(), PackageSHA256: types.StringValue(""), Config: config,
		Kubeconfig: types.StringNull(), Version: types.StringNull(), Engine: types.StringNull(),
		Nodes: types.ListNull(nodeType),
	}
	hv, d := types.MapValueFrom(ctx, hostObjectType(), hosts)
	diags.Append(d...)
	m.Hosts = hv
	return m, diags
}

// importHost is one inventory host as a hosts entry.
func importHost(ctx context.Context, h *v1alpha1.Host, diags *diag.Diagnostics) hostModel {
	str := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	hm := hostModel{
		Address: types.StringValue(h.SSH.Address), Port: types.Int64Value(int64(h.SSH.Port)), User: types.StringValue(h.SSH.User),
		KeyPath: str(h.SSH.KeyPath), HostKey: str(h.SSH.HostKey), Hostname: str(h.Hostname),
		PrivateAddress: str(h.PrivateAddress), PrivateInterface: str(h.PrivateInterface), Role: types.StringValue(h.Role),
		Profile: str(h.Profile), State: types.StringValue(statePresent), SudoPasswordEnv: str(h.SudoPasswordEnv),
		Labels: types.MapNull(types.StringType), Taints: types.ListNull(types.StringType), Environment: types.MapNull(types.StringType),
	}
	if h.SSH.Bastion != nil {
		b := h.SSH.Bastion
		hm.Bastion = &sshModel{Address: types.StringValue(b.Address), Port: types.Int64Value(int64(b.Port)),
			User: types.StringValue(b.User), KeyPath: str(b.KeyPath), HostKey: str(b.HostKey)}
	}
	var d diag.Diagnostics
	if len(h.Labels) > 0 {
		hm.Labels, d = types.MapValueFrom(ctx, types.StringType, h.Labels)
		diags.Append(d...)
	}
	if len(h.Taints) > 0 {
		hm.Taints, d = types.ListValueFrom(ctx, types.StringType, h.Taints)
		diags.Append(d...)
	}
	if len(h.Environment) > 0 {
		hm.Environment, d = types.MapValueFrom(ctx, types.StringType, h.Environment)
		diags.Append(d...)
	}
	return hm
}

// rawConfig is the document's spec.config as written, without the load
// balancer, the defaults the loader fills in and the inline registry
// secrets (named in dropped), as YAML.
func rawConfig(file string) (config types.String, dropped []string, err error) {
	data, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		return types.StringNull(), nil, err
	}
	var doc struct {
		Spec struct {
			Config map[string]any `yaml:"config"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return types.StringNull(), nil, err
	}
	delete(doc.Spec.Config, "loadbalancer")
	dropped = dropRegistrySecrets(doc.Spec.Config)
	if len(doc.Spec.Config) == 0 {
		return types.StringNull(), dropped, nil
	}
	out, err := yaml.Marshal(doc.Spec.Config)
	if err != nil {
		return types.StringNull(), nil, err
	}
	return types.StringValue(string(out)), dropped, nil
}

// hostObjectType is the element type of hosts, from the schema.
func hostObjectType() types.ObjectType {
	return clusterSchema().Attributes["hosts"].GetType().(types.MapType).ElemType.(types.ObjectType)
}
