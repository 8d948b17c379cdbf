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

// kc1 of the three controllers, as the phase gives it.
func kc1() Keepalived {
	return Keepalived{
		Cluster: "prod-east", Host: "kc1", Interface: "eth0", Address: "10.0.0.12",
		Peers: []string{"10.0.0.11", "10.0.0.13"}, Priority: PriorityOf(1),
		VIP: netip.MustParsePrefix("10.0.0.250/32"), Settings: (&v1alpha1.VIP{}).KeepalivedSettings(),
	}
}

// instance is the vrrp_instance block's lines, trimmed, comments left out.
func instance(t *testing.T, conf []byte) []string {
	t.Helper()
	_, block, ok := strings.Cut(string(conf), "vrrp_instance cargoship_api {\n")
	require.True(t, ok)
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// between is the lines of a block inside the instance: "unicast_peer {".
func between(lines []string, open string) []string {
	for i, l := range lines {
		if l == open {
			for j := i + 1; j < len(lines); j++ {
				if lines[j] == "}" {
					return lines[i+1 : j]
				}
			}
		}
	}
	return nil
}

// Issue 39: keepalived takes an advert only from another controller's
// address, and only with TTL 255, which no packet keeps after a router, so
// a host off the segment cannot move the VIP by forging one. VRRPv2's
// password stays out (docs/ha.md says why), as does vrrp_strict, which
// forbids unicast.
func TestConfigTakesAdvertsOnlyFromPeersOnTheSegment(t *testing.T) {
	got, err := kc1().Config()
	require.NoError(t, err)
	lines := instance(t, got)
	for _, want := range []string{"unicast_src_ip 10.0.0.12", "unicast_ttl 255", "check_unicast_src"} {
		assert.Contains(t, lines, want)
	}
	assert.Equal(t, []string{"10.0.0.11 min_ttl 255", "10.0.0.13 min_ttl 255"}, between(lines, "unicast_peer {"),
		"the other controllers, each required to arrive with TTL 255")
	for _, no := range []string{"authentication", "auth_type", "auth_pass", "vrrp_strict"} {
		assert.NotContains(t, string(got), no)
	}
}

// A lone controller has no one to send to: no unicast keywords, which
// keepalived refuses without peers; it multicasts and checks TTL 255 itself.
func TestConfigWithoutPeersHasNoUnicast(t *testing.T) {
	k := kc1()
	k.Peers = nil
	got, err := k.Config()
	require.NoError(t, err)
	assert.NotContains(t, string(got), "unicast")
	assert.Contains(t, instance(t, got), "state BACKUP")
}

// Every value that reaches keepalived.conf is checked: a name for the
// interface, IP addresses of one family for this controller and its peers.
// A hostname or an address of the other family would leave keepalived
// without that peer, and its source check without it.
func TestConfigRefusesWhatWouldBreakItsSyntaxOrItsSourceCheck(t *testing.T) {
	for name, change := range map[string]func(*Keepalived){
		"interface with a brace": func(k *Keepalived) { k.Interface = "eth0 }" },
		"empty interface":        func(k *Keepalived) { k.Interface = "" },
		"long interface":         func(k *Keepalived) { k.Interface = "abcdefghijklmnop" },
		"address with a newline": func(k *Keepalived) { k.Address = "10.0.0.12\n" },
		"address with a zone":    func(k *Keepalived) { k.Address = "fe80::12%eth0" },
		"hostname as address":    func(k *Keepalived) { k.Address = "kc1" },
		"hostname as peer":       func(k *Keepalived) { k.Peers = []string{"10.0.0.11", "kc2"} },
		"peer of another family": func(k *Keepalived) { k.Peers = []string{"10.0.0.11", "fd00::13"} },
		"peer with a brace":      func(k *Keepalived) { k.Peers = []string{"10.0.0.11 }"} },
		"cluster with a newline": func(k *Keepalived) { k.Cluster = "prod\neast" },
	} {
		k := kc1()
		change(&k)
		_, err := k.Config()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "kc1: ", name)
	}
	k := kc1()
	k.Address, k.Peers, k.VIP = "fd00::12", []string{"fd00::11", "fd00::13"}, netip.MustParsePrefix("fd00::250/128")
	got, err := k.Config()
	require.NoError(t, err, "IPv6 throughout")
	assert.Equal(t, []string{"fd00::11 min_ttl 255", "fd00::13 min_ttl 255"}, between(instance(t, got), "unicast_peer {"))
}

func TestCheckScriptRunsTheGivenProbe(t *testing.T) {
	s := string(CheckScript("env KUBECONFIG=/etc/rancher/k3s/k3s.yaml k3s kubectl get --raw=/readyz"))
	assert.True(t, strings.HasPrefix(s, "#!/bin/sh\n"))
	assert.Contains(t, s, "k3s kubectl get --raw=/readyz >/dev/null 2>&1\n")
}
