package vip

import (
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func cluster(priority ...string) *v1alpha1.Cluster {
	c := &v1alpha1.Cluster{}
	c.Metadata.Name = "prod-east"
	for _, h := range []struct{ name, addr, role string }{
		{"kc0", "10.0.0.11", v1alpha1.RoleController},
		{"kw0", "10.0.0.21", v1alpha1.RoleWorker},
		{"kc1", "10.0.0.12", v1alpha1.RoleController},
		{"kc2", "10.0.0.13", v1alpha1.RoleController},
	} {
		c.Spec.Hosts = append(c.Spec.Hosts, v1alpha1.Host{Hostname: h.name, PrivateAddress: h.addr, Role: h.role})
	}
	c.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.250", Provider: v1alpha1.VIPKeepalived}
	if len(priority) > 0 {
		c.Spec.Config.VIP.Keepalived = &v1alpha1.Keepalived{Priority: priority}
	}
	return c
}

func names(hs []*v1alpha1.Host) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name())
	}
	return out
}

func TestOrderIsThePriorityListThenTheInventory(t *testing.T) {
	assert.Equal(t, []string{"kc0", "kc1", "kc2"}, names(Order(cluster())), "controllers only, inventory order")
	assert.Equal(t, []string{"kc2", "kc0", "kc1"}, names(Order(cluster("kc2"))), "the named first, then the rest in inventory order")
	assert.Equal(t, []string{"kc1", "kc2", "kc0"}, names(Order(cluster("10.0.0.12", "kc2"))), "by private address too")
	assert.Equal(t, 200, PriorityOf(0))
	assert.Equal(t, 190, PriorityOf(1))
	assert.Equal(t, 1, PriorityOf(100), "never below VRRP's lowest priority")
}

func TestPrefixKeepsAWrittenLengthElseAHostRoute(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.250": "10.0.0.250/32", "10.0.0.250/24": "10.0.0.250/24", "fd00::5": "fd00::5/128"} {
		p, err := Prefix(&v1alpha1.VIP{Address: in})
		require.NoError(t, err, in)
		assert.Equal(t, want, p.String(), in)
	}
	_, err := Prefix(&v1alpha1.VIP{Address: "api.example"})
	assert.ErrorContains(t, err, "spec.config.vip.address")
}

// The second controller's configuration, against a golden file: unicast
// peers are the other two, the priority is the second in order, every
// instance starts as BACKUP and tracks the API check.
func TestConfigGolden(t *testing.T) {
	c := cluster()
	v := c.Spec.Config.VIP
	k := Keepalived{
		Cluster: c.Metadata.Name, Host: "kc1", Interface: "eth0", Address: "10.0.0.12",
		Peers: []string{"10.0.0.11", "10.0.0.13"}, Priority: PriorityOf(1),
		VIP: netip.MustParsePrefix("10.0.0.250/32"), Settings: v.KeepalivedSettings(),
	}
	got, err := k.Config()
	require.NoError(t, err)
	golden := filepath.Join("testdata", "keepalived-kc1.conf")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	for _, line := range []string{"state BACKUP", "priority 190", "unicast_src_ip 10.0.0.12", "10.0.0.250/32 dev eth0", "virtual_router_id 51", "fall 2"} {
		assert.Contains(t, string(got), line)
	}
}

func TestConfigRefusesWhatWouldBreakItsSyntax(t *testing.T) {
	k := Keepalived{Cluster: "c", Host: "kc0", Interface: "eth0 }", Address: "10.0.0.11", VIP: netip.MustParsePrefix("10.0.0.250/32"), Settings: (&v1alpha1.VIP{}).KeepalivedSettings()}
	_, err := k.Config()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kc0")
}

func TestCheckScriptRunsTheGivenProbe(t *testing.T) {
	s := string(CheckScript("env KUBECONFIG=/etc/rancher/k3s/k3s.yaml k3s kubectl get --raw=/readyz"))
	assert.True(t, strings.HasPrefix(s, "#!/bin/sh\n"))
	assert.Contains(t, s, "k3s kubectl get --raw=/readyz >/dev/null 2>&1\n")
}
