package provider

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// sensitivePaths are the attributes that hold secrets, as docs/provider.md
// lists them: a plan shows each as (sensitive value).
var sensitivePaths = []string{
	"config",            // registries' auth.pass and auth.token, credentials in URLs
	"hosts.environment", // HTTPS_PROXY=http://user:pass@...
	"kubeconfig",        // the cluster's admin credentials
}

// TestSecretAttributesAreSensitive: every attribute that can carry a
// secret is Sensitive, and no other is, so the list above (and the docs)
// stays the truth.
func TestSecretAttributesAreSensitive(t *testing.T) {
	var got []string
	walkSensitive("", clusterSchema().Attributes, &got)
	sort.Strings(got)
	if !slices.Equal(got, sensitivePaths) {
		t.Errorf("sensitive attributes %v, want %v", got, sensitivePaths)
	}
}

// walkSensitive collects the dotted paths of sensitive attributes.
func walkSensitive(prefix string, attrs map[string]schema.Attribute, out *[]string) {
	for name, a := range attrs {
		p := prefix + name
		if a.IsSensitive() {
			*out = append(*out, p)
		}
		switch n := a.(type) {
		case schema.MapNestedAttribute:
			walkSensitive(p+".", n.NestedObject.Attributes, out)
		case schema.ListNestedAttribute:
			walkSensitive(p+".", n.NestedObject.Attributes, out)
		case schema.SingleNestedAttribute:
			walkSensitive(p+".", n.Attributes, out)
		}
	}
}

// TestConfigDiagnosticsQuoteNoSecret: a finding or an error about config
// points at the resource (Terraform would print config's expression, an
// inline password in it, with a diagnostic at the attribute), and an
// unreadable config is not quoted back.
func TestConfigDiagnosticsQuoteNoSecret(t *testing.T) {
	hosts := map[string]hostModel{"kc0": testHost("10.0.0.11", "controller")}
	m := testModel()
	m.Config = types.StringValue("registries:\n  - name: docker.io\n    auth: {user: pull, pass: PASS-0451}\n")
	inv, _, diags := buildInventory(context.Background(), m, hosts, everyHost)
	if diags.HasError() {
		t.Fatal(diags)
	}
	_, fs, _ := v1alpha1.ParseCluster("doc", inv.Data)
	addFindings(&diags, inv, fs)
	m.Config = types.StringValue("registries: [{name: docker.io, auth: {pass: PASS-0451}\n")
	_, _, d := buildInventory(context.Background(), m, hosts, everyHost)
	diags.Append(d...)
	if len(diags.Warnings()) == 0 || len(diags.Errors()) == 0 {
		t.Fatalf("want the inline password's warning and the parse error: %v", diags)
	}
	for _, d := range diags {
		if wp, ok := d.(diag.DiagnosticWithPath); ok && !wp.Path().Equal(path.Empty()) {
			t.Errorf("%q points at %s", d.Summary(), wp.Path())
		}
		if strings.Contains(d.Summary()+d.Detail(), "PASS-0451") {
			t.Errorf("%q quotes the password: %s", d.Summary(), d.Detail())
		}
		if !strings.Contains(d.Summary()+d.Detail(), "config") {
			t.Errorf("%q does not name config: %s", d.Summary(), d.Detail())
		}
	}
}

// TestDiagnosticsPointAwayFromSecrets: which attributes a diagnostic may
// point at. Terraform prints the source of the attribute's expression: for
// hosts, every host's environment with it.
func TestDiagnosticsPointAwayFromSecrets(t *testing.T) {
	kc0 := path.Root("hosts").AtMapKey("kc0")
	for _, c := range []struct {
		at   path.Path
		want bool
	}{
		{path.Root("config"), false},
		{path.Root("hosts"), false},
		{kc0.AtName("environment"), false},
		{kc0.AtName("environment").AtMapKey("HTTPS_PROXY"), false},
		{kc0.AtName("private_address"), true},
		{kc0.AtName("bastion").AtName("address"), true},
		{kc0, true},
		{path.Root("load_balancer"), true},
	} {
		if got := pointable(c.at); got != c.want {
			t.Errorf("pointable(%s) = %t, want %t", c.at, got, c.want)
		}
	}
}
