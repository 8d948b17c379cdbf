package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// clusterModel is cargoship_cluster's attributes (docs/provider.md).
type clusterModel struct {
	ID                types.String   `tfsdk:"id"`
	Name              types.String   `tfsdk:"name"`
	LoadBalancer      types.String   `tfsdk:"load_balancer"`
	Package           types.String   `tfsdk:"package"`
	PackageSHA256     types.String   `tfsdk:"package_sha256"`
	Hosts             types.Map      `tfsdk:"hosts"`
	Config            types.String   `tfsdk:"config"`
	ExportKubeconfig  types.Bool     `tfsdk:"export_kubeconfig"`
	LabelNodes        types.Bool     `tfsdk:"label_nodes"`
	UpdateHosts       types.Bool     `tfsdk:"update_hosts"`
	UpdateFirewall    types.Bool     `tfsdk:"update_firewall"`
	Concurrency       types.Int64    `tfsdk:"concurrency"`
	WorkerConcurrency types.Int64    `tfsdk:"worker_concurrency"`
	Fanout            types.Bool     `tfsdk:"fanout"`
	Timeouts          *timeoutsModel `tfsdk:"timeouts"`
	Kubeconfig        types.String   `tfsdk:"kubeconfig"`
	Version           types.String   `tfsdk:"version"`
	Engine            types.String   `tfsdk:"engine"`
	Nodes             types.List     `tfsdk:"nodes"`
}

// hostModel is one entry of the hosts map: a spec.hosts entry of the
// inventory with an ssh connection.
type hostModel struct {
	Address          types.String `tfsdk:"address"`
	Port             types.Int64  `tfsdk:"port"`
	User             types.String `tfsdk:"user"`
	KeyPath          types.String `tfsdk:"key_path"`
	HostKey          types.String `tfsdk:"host_key"`
	Bastion          *sshModel    `tfsdk:"bastion"`
	Hostname         types.String `tfsdk:"hostname"`
	PrivateAddress   types.String `tfsdk:"private_address"`
	PrivateInterface types.String `tfsdk:"private_interface"`
	Role             types.String `tfsdk:"role"`
	Profile          types.String `tfsdk:"profile"`
	State            types.String `tfsdk:"state"`
	SudoPasswordEnv  types.String `tfsdk:"sudo_password_env"`
	Labels           types.Map    `tfsdk:"labels"`
	Taints           types.List   `tfsdk:"taints"`
	Environment      types.Map    `tfsdk:"environment"`
}

// sshModel is a bastion: the jump host a host is reached through.
type sshModel struct {
	Address types.String `tfsdk:"address"`
	Port    types.Int64  `tfsdk:"port"`
	User    types.String `tfsdk:"user"`
	KeyPath types.String `tfsdk:"key_path"`
	HostKey types.String `tfsdk:"host_key"`
}

// timeoutsModel bounds each operation; empty is the default.
type timeoutsModel struct {
	Create types.String `tfsdk:"create"`
	Update types.String `tfsdk:"update"`
	Delete types.String `tfsdk:"delete"`
}

// nodeModel is one node of the cluster as the hosts report it.
type nodeModel struct {
	Name    types.String `tfsdk:"name"`
	Role    types.String `tfsdk:"role"`
	Version types.String `tfsdk:"version"`
	Ready   types.Bool   `tfsdk:"ready"`
}

// Host states.
const (
	statePresent = "present"
	stateAbsent  = "absent"
)
