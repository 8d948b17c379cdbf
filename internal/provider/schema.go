package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// nodeType is the object type of one element of nodes.
var nodeType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "role": types.StringType, "version": types.StringType, "ready": types.BoolType,
}}

// clusterSchema is cargoship_cluster's schema: the inventory's fields in
// Terraform's naming (docs/provider.md lists each with its inventory field).
func clusterSchema() schema.Schema {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return schema.Schema{
		Description: "A Kubernetes cluster that cargoship installs from an offline package onto the hosts, over SSH: " +
			"create and update run `cargoship apply`, a host set absent or taken out of hosts is removed as " +
			"`cargoship reset --target-hosts` removes it, and destroy resets every host.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				Description: "The cluster's name."},
			"name": schema.StringAttribute{Required: true,
				Description: "The cluster's name (metadata.name): lower-case letters, digits and hyphens."},
			"load_balancer": schema.StringAttribute{Required: true,
				Description: "The address clients and joining nodes reach the API on (spec.config.loadbalancer): a VIP, a DNS name or the leader's private address."},
			"package": schema.StringAttribute{Required: true,
				Description: "Path of the cargoship package (.tar.zst). Its sha256 is tracked: a new package at the same path is a change."},
			"package_sha256": schema.StringAttribute{Computed: true,
				Description: "The sha256 of the package the hosts run; empty after a refresh found them running something else."},
			"hosts": schema.MapNestedAttribute{Required: true,
				Description:  "The hosts, keyed by name. Controllers run first, and the controller whose key sorts first leads (founds the cluster).",
				NestedObject: schema.NestedAttributeObject{Attributes: hostAttributes()}},
			// Sensitive: registries' auth.pass and auth.token, and credentials
			// in a mirror or proxy URL, live in it.
			"config": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "The inventory's spec.config (registries, profiles, firewall) as YAML or JSON, e.g. yamlencode({...}); its loadbalancer, if any, must equal load_balancer. " +
					"Sensitive, as registry credentials may be in it: prefer auth.passEnv, which keeps the password out of the state."},
			"export_kubeconfig": schema.BoolAttribute{Optional: true,
				Description: "Read the admin kubeconfig from the leader over SSH into kubeconfig."},
			"label_nodes": schema.BoolAttribute{Optional: true,
				Description: "Label each node with its profile (apply's phase 29)."},
			"update_hosts": schema.BoolAttribute{Optional: true,
				Description: "Write every node's name and address into /etc/hosts (apply -H)."},
			"update_firewall": schema.BoolAttribute{Optional: true,
				Description: "Configure firewalld, ufw or nftables for the cluster (apply -F)."},
			"concurrency": schema.Int64Attribute{Optional: true,
				Description: "Hosts worked on at once (default 30)."},
			"worker_concurrency": schema.Int64Attribute{Optional: true,
				Description: "Workers started or upgraded at once; 0 means all."},
			"fanout": schema.BoolAttribute{Optional: true,
				Description: "Peer fan-out (apply --fanout): each file of 1 MiB or more leaves this machine once and hosts pass it on to each other; unset or true is on, false sends every file from here."},
			"timeouts": schema.SingleNestedAttribute{Optional: true,
				Description: "How long create, update and delete may take, as Go durations (\"45m\"); unset is unbounded.",
				Attributes: map[string]schema.Attribute{
					"create": schema.StringAttribute{Optional: true},
					"update": schema.StringAttribute{Optional: true},
					"delete": schema.StringAttribute{Optional: true},
				}},
			"kubeconfig": schema.StringAttribute{Computed: true, Sensitive: true,
				Description: "The admin kubeconfig pointed at load_balancer, when export_kubeconfig is set."},
			"version": schema.StringAttribute{Computed: true,
				Description: "The engine version the hosts run; unknown in a plan that changes the package."},
			"engine": schema.StringAttribute{Computed: true,
				Description: "The engine the package installs: k3s, rke2 or upstream."},
			"nodes": schema.ListNestedAttribute{Computed: true,
				Description: "The cluster's nodes as the controllers list them.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Computed: true},
					"role":    schema.StringAttribute{Computed: true},
					"version": schema.StringAttribute{Computed: true},
					"ready":   schema.BoolAttribute{Computed: true},
				}}},
		},
	}
}

// hostAttributes are one host's attributes.
func hostAttributes() map[string]schema.Attribute {
	a := sshAttributes()
	a["bastion"] = schema.SingleNestedAttribute{Optional: true,
		Description: "A jump host this host is reached through.", Attributes: sshAttributes()}
	a["hostname"] = schema.StringAttribute{Optional: true,
		Description: "The node name; defaults to the host's key in hosts."}
	a["private_address"] = schema.StringAttribute{Optional: true,
		Description: "The address peers reach this host on; discovered when unset."}
	a["private_interface"] = schema.StringAttribute{Optional: true,
		Description: "The interface holding private_address; discovered when unset."}
	a["role"] = schema.StringAttribute{Required: true,
		Description: "controller, controller+worker, single or worker."}
	a["profile"] = schema.StringAttribute{Optional: true,
		Description: "A spec.config.profiles entry; defaults to the role."}
	a["state"] = schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(statePresent),
		Description: "present (the default) or absent: an absent host is drained, deleted from the cluster and its engine uninstalled."}
	a["sudo_password_env"] = schema.StringAttribute{Optional: true,
		Description: "The environment variable holding this host's sudo password, read from the environment OpenTofu or Terraform runs in; the password is never in the plan or the state."}
	a["labels"] = schema.MapAttribute{Optional: true, ElementType: types.StringType,
		Description: "Kubernetes node labels."}
	a["taints"] = schema.ListAttribute{Optional: true, ElementType: types.StringType,
		Description: "Node taints, key[=value]:Effect."}
	// Sensitive: a proxy URL with its credentials (HTTPS_PROXY) is the
	// usual value.
	a["environment"] = schema.MapAttribute{Optional: true, Sensitive: true, ElementType: types.StringType,
		Description: "Written to the host's /etc/environment. Sensitive, as proxy credentials often are in it."}
	return a
}

// sshAttributes are how a host (or its bastion) is reached.
func sshAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"address": schema.StringAttribute{Required: true,
			Description: "The IP address or DNS name to connect to."},
		"port": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(22),
			Description: "The SSH port."},
		"user": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("root"),
			Description: "The login user; without root it must be able to sudo."},
		"key_path": schema.StringAttribute{Optional: true,
			Description: "The private key, an absolute path (OpenTofu runs from wherever it is invoked); without it the agent and ~/.ssh/id_* are tried."},
		"host_key": schema.StringAttribute{Optional: true,
			Description: "Pins the host's public key (authorized_keys form or a SHA256: fingerprint) instead of known_hosts."},
	}
}
