// Package provider is the OpenTofu/Terraform provider: one resource,
// cargoship_cluster, whose create, update and delete run the same actions
// as `cargoship apply` and `cargoship reset` (docs/provider.md).
package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Address is where OpenTofu finds the provider; a filesystem mirror or a
// dev override serves it under registry.terraform.io/colonel-byte/cargoship
// for Terraform too (docs/provider.md, "Install offline").
const Address = "registry.opentofu.org/colonel-byte/cargoship"

// requireSignatureEnv is the CLI's switch for a signature policy; the
// provider honours it the same way.
const requireSignatureEnv = "CARGOSHIP_REQUIRE_SIGNATURE"

// New returns the provider for a version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &cargoshipProvider{version: version} }
}

type cargoshipProvider struct{ version string }

// providerModel is the provider block.
type providerModel struct {
	TrustedKeys      types.List   `tfsdk:"trusted_keys"`
	RequireSignature types.Bool   `tfsdk:"require_signature"`
	KnownHosts       types.String `tfsdk:"known_hosts"`
	TmpDir           types.String `tfsdk:"tmp_dir"`
}

// Metadata implements provider.Provider.
func (p *cargoshipProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "cargoship"
	resp.Version = p.version
}

// Schema implements provider.Provider.
func (p *cargoshipProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Installs Kubernetes (k3s, rke2, kubeadm) from a cargoship package onto hosts over SSH, offline.",
		Attributes: map[string]schema.Attribute{
			"trusted_keys": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				Description: "ed25519 public keys (PEM files) a package must be signed by, as the settings' trusted_keys."},
			"require_signature": schema.BoolAttribute{Optional: true,
				Description: "Refuse an unsigned package (also " + requireSignatureEnv + ")."},
			"known_hosts": schema.StringAttribute{Optional: true,
				Description: "The known_hosts file host keys are checked against; unset is as the CLI (SSH_KNOWN_HOSTS, then ~/.ssh/known_hosts); \"\" checks none."},
			"tmp_dir": schema.StringAttribute{Optional: true,
				Description: "Where the package is unpacked on this machine (default: the system's temp dir)."},
		},
	}
}

// Configure implements provider.Provider: the trust policy and SSH
// settings every run of the provider shares.
func (p *cargoshipProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	r := &runner{tmpDir: m.TmpDir.ValueString(), lookupEnv: os.LookupEnv}
	if !m.KnownHosts.IsNull() {
		r.knownHosts = m.KnownHosts.ValueString()
		r.knownHostsSet = true
	}
	var keys []string
	resp.Diagnostics.Append(m.TrustedKeys.ElementsAs(ctx, &keys, false)...)
	for i, k := range keys {
		key, err := pkgfile.LoadTrustedKey(k, fmt.Sprintf("trusted_keys[%d]", i))
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("trusted_keys").AtListIndex(i), "Untrusted key file", err.Error())
			continue
		}
		r.trust.Keys = append(r.trust.Keys, key)
	}
	r.trust.RequireSignature = m.RequireSignature.ValueBool()
	if r.trust.RequireSignature {
		r.trust.RequiredBy = "the provider's require_signature"
	} else if v, ok := os.LookupEnv(requireSignatureEnv); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			resp.Diagnostics.AddError("Invalid "+requireSignatureEnv, fmt.Sprintf("%s=%q is not a boolean", requireSignatureEnv, v))
		}
		r.trust.RequireSignature, r.trust.RequiredBy = b, requireSignatureEnv
	}
	resp.ResourceData = r
}

// Resources implements provider.Provider.
func (p *cargoshipProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newClusterResource}
}

// DataSources implements provider.Provider.
func (p *cargoshipProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
