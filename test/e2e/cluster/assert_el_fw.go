package cluster

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/firewall"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// elNote checks an Enterprise Linux phase on a fleet with no such host: it
// claims none, and the run says so.
func elNote(t *testing.T, w *world, s *node.Fleet, title string) {
	t.Helper()
	for _, h := range s.Hosts {
		if h.Facts.Family == v1alpha1.FamilyEnterpriseLinux {
			w.standDown(t, title, "the fleet has Enterprise Linux hosts; their SELinux and fapolicyd state is asserted by the VM fleet")
			return
		}
	}
	assert.Contains(t, strings.Join(s.Report.Notes(), "\n"), title+":", "the run says the phase claimed no host")
}

// assertFirewall checks one host's firewall from inside: every peer and
// the cluster networks trusted, the kubelet port open everywhere and, on
// controllers, the API port and the engine's join port (the same 6443 for
// k3s, 9345 for rke2), through the front end the host runs.
func assertFirewall(t *testing.T, w *world, in *inspector, s *node.Fleet, name string, h *node.Host) {
	t.Helper()
	ports := []string{"10250"}
	if h.IsController() {
		ports = slices.Compact([]string{strconv.Itoa(s.Engine.APIPort()), strconv.Itoa(s.Engine.JoinPort())})
	}
	var peers []string
	for _, p := range s.Hosts {
		if p != h {
			peers = append(peers, p.Facts.PrivateAddress)
		}
	}
	want := ""
	for _, f := range h.Facts.Firewalls {
		if f.Name == firewall.NameFirewalld && f.Active {
			want = firewall.NameFirewalld
		}
		if f.Name == firewall.NameUFW && f.Active && want == "" {
			want = firewall.NameUFW
		}
	}
	switch want {
	case firewall.NameFirewalld:
		entries := in.root(t, name, "firewall-cmd --ipset="+firewall.IPSetNodes+" --get-entries")
		for _, p := range peers {
			assert.Contains(t, entries, p, "%s: firewalld ipset lacks peer %s", name, p)
		}
		assert.Contains(t, in.root(t, name, "firewall-cmd --zone=trusted --list-sources"), "ipset:"+firewall.IPSetNodes)
		service := in.root(t, name, "firewall-cmd --info-service="+firewall.FirewalldServ)
		for _, port := range ports {
			assert.Contains(t, service, port+"/tcp", "%s: firewalld opens %s", name, port)
		}
	case firewall.NameUFW:
		status := in.root(t, name, "ufw status")
		for _, p := range peers {
			assert.Contains(t, status, p, "%s: ufw lacks peer %s", name, p)
		}
		for _, port := range ports {
			assert.Contains(t, status, port+"/tcp", "%s: ufw opens %s", name, port)
		}
	default:
		table := in.root(t, name, "nft list table "+firewall.NFTTable)
		for _, p := range peers {
			assert.Contains(t, table, p, "%s: nftables table lacks peer %s", name, p)
		}
		for _, port := range ports {
			assert.Regexp(t, `dport [^\n]*\b`+port+`\b`, table, "%s: port %s is open", name, port)
		}
		if w.backend == backendContainer && (name == "kw0" || name == "kw1") {
			t.Errorf("%s should run %s, the suite enabled it", name, map[string]string{"kw0": "firewalld", "kw1": "ufw"}[name])
		}
	}
}
