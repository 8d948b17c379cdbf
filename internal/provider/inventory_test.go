package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// testHost is a hosts entry as a plan holds it: defaults filled, the rest null.
func testHost(address, role string) hostModel {
	return hostModel{
		Address: types.StringValue(address), Port: types.Int64Value(22), User: types.StringValue("root"),
		KeyPath: types.StringValue("/keys/id"), HostKey: types.StringNull(), Hostname: types.StringNull(),
		PrivateAddress: types.StringNull(), PrivateInterface: types.StringNull(), Role: types.StringValue(role),
		Profile: types.StringNull(), State: types.StringValue(statePresent), SudoPasswordEnv: types.StringNull(),
		Labels: types.MapNull(types.StringType), Taints: types.ListNull(types.StringType), Environment: types.MapNull(types.StringType),
	}
}

func testModel() *clusterModel {
	return &clusterModel{Name: types.StringValue("edge"), LoadBalancer: types.StringValue("10.0.0.11"), Config: types.StringNull()}
}

func everyHost(string, hostModel) bool { return true }

// TestControllersFirstAndTheFirstKeyLeads: the hosts map orders the run
// as docs/provider.md says, whatever order the keys come in.
func TestControllersFirstAndTheFirstKeyLeads(t *testing.T) {
	hosts := map[string]hostModel{
		"a-worker": testHost("10.0.0.21", "worker"),
		"kc1":      testHost("10.0.0.12", "controller"),
		"kc0":      testHost("10.0.0.11", "controller+worker"),
		"b-worker": testHost("10.0.0.22", "worker"),
	}
	got := strings.Join(orderedKeys(hosts), ",")
	if want := "kc0,kc1,a-worker,b-worker"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	inv, known, diags := buildInventory(context.Background(), testModel(), hosts, everyHost)
	if !known || diags.HasError() {
		t.Fatalf("known %t, %v", known, diags)
	}
	c, _, err := v1alpha1.ParseCluster("doc", inv.Data)
	if err != nil {
		t.Fatalf("the document does not load: %v\n%s", err, inv.Data)
	}
	if c.Spec.Hosts[0].Hostname != "kc0" || c.Spec.Hosts[0].SSH.Address != "10.0.0.11" {
		t.Errorf("the leader is %s at %s, want kc0 (the first controller key)", c.Spec.Hosts[0].Hostname, c.Spec.Hosts[0].SSH.Address)
	}
}

// TestDocumentCarriesEveryHostAttribute maps each attribute to its
// inventory field, and the config attribute to spec.config.
func TestDocumentCarriesEveryHostAttribute(t *testing.T) {
	ctx := context.Background()
	h := testHost("10.0.0.11", "controller")
	h.Hostname = types.StringValue("node-a")
	h.Port, h.User = types.Int64Value(2222), types.StringValue("ops")
	h.HostKey = types.StringValue("SHA256:" + strings.Repeat("A", 43))
	h.PrivateAddress, h.PrivateInterface = types.StringValue("192.168.0.11"), types.StringValue("eth1")
	h.Profile, h.SudoPasswordEnv = types.StringValue("controller"), types.StringValue("NODE_A_SUDO")
	h.Labels, _ = types.MapValueFrom(ctx, types.StringType, map[string]string{"zone": "a"})
	h.Taints, _ = types.ListValueFrom(ctx, types.StringType, []string{"dedicated=edge:NoSchedule"})
	h.Environment, _ = types.MapValueFrom(ctx, types.StringType, map[string]string{"HTTP_PROXY": "http://proxy:3128"})
	h.Bastion = &sshModel{Address: types.StringValue("jump.example"), Port: types.Int64Value(22), User: types.StringValue("root"),
		KeyPath: types.StringValue("/keys/jump"), HostKey: types.StringNull()}
	m := testModel()
	m.Config = types.StringValue("firewall:\n  ports:\n  - port: 8080\n")
	inv, _, diags := buildInventory(ctx, m, map[string]hostModel{"a": h}, everyHost)
	if diags.HasError() {
		t.Fatal(diags)
	}
	c, _, err := v1alpha1.ParseCluster("doc", inv.Data)
	if err != nil {
		t.Fatalf("%v\n%s", err, inv.Data)
	}
	got := c.Spec.Hosts[0]
	switch {
	case got.Hostname != "node-a", got.SSH.Port != 2222, got.SSH.User != "ops", got.SSH.KeyPath != "/keys/id",
		got.PrivateAddress != "192.168.0.11", got.PrivateInterface != "eth1", got.Profile != "controller",
		got.SudoPasswordEnv != "NODE_A_SUDO", got.Labels["zone"] != "a", len(got.Taints) != 1,
		got.Environment["HTTP_PROXY"] != "http://proxy:3128", got.SSH.Bastion == nil || got.SSH.Bastion.Address != "jump.example",
		got.SSH.HostKey == "":
		t.Errorf("the host did not carry every attribute: %+v\n%s", got, inv.Data)
	}
	if c.Spec.Config.Loadbalancer != "10.0.0.11" || c.Spec.Config.Firewall == nil || len(c.Spec.Config.Firewall.Ports) != 1 {
		t.Errorf("spec.config is %+v", c.Spec.Config)
	}
	if inv.Names["a"] != "node-a" {
		t.Errorf("node name of a: %q", inv.Names["a"])
	}
}

// TestConfigLoadBalancerMustAgree: one place sets the load balancer. The
// errors are the resource's, as config is sensitive (sensitive.go).
func TestConfigLoadBalancerMustAgree(t *testing.T) {
	m := testModel()
	m.Config = types.StringValue("loadbalancer: 10.9.9.9\n")
	_, _, diags := buildInventory(context.Background(), m, map[string]hostModel{"kc0": testHost("10.0.0.11", "controller")}, everyHost)
	if !hasResourceError(diags, "load_balancer") {
		t.Errorf("a second load balancer in config: %v", diags)
	}
	m.Config = types.StringValue("[not, a, mapping]")
	_, _, diags = buildInventory(context.Background(), m, map[string]hostModel{"kc0": testHost("10.0.0.11", "controller")}, everyHost)
	if !hasResourceError(diags, "mapping") {
		t.Errorf("config that is not a mapping: %v", diags)
	}
}

// TestFindingsNameTheAttribute: the loader's messages, at the attribute a
// plan shows, including the HA warnings.
func TestFindingsNameTheAttribute(t *testing.T) {
	hosts := map[string]hostModel{
		"kc0": testHost("10.0.0.11", "controller"),
		"kc1": testHost("10.0.0.12", "controller"),
		"kw0": testHost("10.0.0.21", "worker"),
	}
	kw0 := hosts["kw0"]
	kw0.PrivateAddress = types.StringValue("not an address")
	hosts["kw0"] = kw0
	inv, _, diags := buildInventory(context.Background(), testModel(), hosts, everyHost)
	if diags.HasError() {
		t.Fatal(diags)
	}
	_, fs, _ := v1alpha1.ParseCluster("doc", inv.Data)
	var got diag.Diagnostics
	addFindings(&got, inv, fs)
	at := path.Root("hosts").AtMapKey("kw0").AtName("private_address")
	if !hasAttrError(got, at, `hosts["kw0"].private_address: "not an address" is not an IP address (spec.hosts[2].privateAddress in the inventory)`) {
		t.Errorf("no error at %s: %v", at, got)
	}
	warned := false
	for _, d := range got.Warnings() {
		warned = warned || strings.Contains(d.Detail(), "controller")
	}
	if !warned {
		t.Errorf("two controllers: no HA warning among %v", got)
	}
}

// TestLeavingHostsAreAbsentOrGone: what a removal takes out, and the
// document it runs on (the leaving hosts kept in it, as reset needs).
func TestLeavingHostsAreAbsentOrGone(t *testing.T) {
	prior := map[string]hostModel{
		"kc0": testHost("10.0.0.11", "controller"),
		"kw0": testHost("10.0.0.21", "worker"),
		"kw1": testHost("10.0.0.22", "worker"),
		"kw2": testHost("10.0.0.23", "worker"),
	}
	was := prior["kw2"]
	was.State = types.StringValue(stateAbsent) // already out: nothing to remove
	prior["kw2"] = was
	planned := map[string]hostModel{"kc0": prior["kc0"], "kw0": prior["kw0"], "kw2": prior["kw2"]}
	gone := prior["kw0"]
	gone.State = types.StringValue(stateAbsent)
	planned["kw0"] = gone // set absent; kw1 left the map
	leaving := leavingHosts(prior, planned)
	if strings.Join(leaving, ",") != "kw0,kw1" {
		t.Fatalf("leaving %v, want kw0 and kw1", leaving)
	}
	inv, targets, diags := removalInventory(context.Background(), testModel(), planned, prior, leaving)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if strings.Join(inv.Keys, ",") != "kc0,kw0,kw1" || strings.Join(targets, ",") != "kw0,kw1" {
		t.Errorf("removal document holds %v with targets %v", inv.Keys, targets)
	}
}

// TestDriftMarksWhatTheHostsSay: a host whose node left reads absent; a
// moved engine version drops the package digest so the plan applies.
func TestDriftMarksWhatTheHostsSay(t *testing.T) {
	hosts := map[string]hostModel{"kc0": testHost("10.0.0.11", "controller"), "kw0": testHost("10.0.0.21", "worker"), "kw1": testHost("10.0.0.22", "worker")}
	inv, _, _ := buildInventory(context.Background(), testModel(), hosts, everyHost)
	m := testModel()
	m.Version, m.PackageSHA256 = types.StringValue("1.35.3-k3s1"), types.StringValue("abc")
	st := &action.Status{Hosts: map[string]action.HostStatus{
		"kc0": {Version: "v1.35.3+k3s1", Running: true}, "kw0": {Version: "v1.35.3+k3s1"}, "kw1": {},
	}, Nodes: []node.Node{{Name: "kc0"}}}
	drift(m, hosts, inv, st)
	if hosts["kw0"].State.ValueString() != stateAbsent || hosts["kw1"].State.ValueString() != stateAbsent || hosts["kc0"].State.ValueString() != statePresent {
		t.Errorf("states kc0 %s kw0 %s kw1 %s", hosts["kc0"].State, hosts["kw0"].State, hosts["kw1"].State)
	}
	if m.PackageSHA256.ValueString() != "abc" {
		t.Errorf("no version moved, yet the digest is %q", m.PackageSHA256.ValueString())
	}
	st.Hosts["kc0"] = action.HostStatus{Version: "v1.35.4+k3s1", Running: true}
	drift(m, hosts, inv, st)
	if m.PackageSHA256.ValueString() != "" || !strings.Contains(m.Version.ValueString(), "kc0 runs v1.35.4+k3s1") {
		t.Errorf("a moved version: digest %q, version %q", m.PackageSHA256.ValueString(), m.Version.ValueString())
	}
}

func hasAttrError(diags diag.Diagnostics, at path.Path, text string) bool {
	for _, d := range diags.Errors() {
		if wp, ok := d.(diag.DiagnosticWithPath); ok && wp.Path().Equal(at) && strings.Contains(d.Summary()+d.Detail(), text) {
			return true
		}
	}
	return false
}

// hasResourceError reports an error about the whole resource, at no
// attribute, whose summary or detail holds text.
func hasResourceError(diags diag.Diagnostics, text string) bool {
	for _, d := range diags.Errors() {
		if wp, ok := d.(diag.DiagnosticWithPath); ok && !wp.Path().Equal(path.Empty()) {
			continue
		}
		if strings.Contains(d.Summary()+d.Detail(), text) {
			return true
		}
	}
	return false
}
