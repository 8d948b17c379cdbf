package firewall

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// zoneListing is --list-all-zones as firewalld 1.3.3's print_zone_info
// prints it (docs/reference/hosts.md §5.1): the runtime's active zone
// marked, forward ports and rich rules one per tab-indented line.
const zoneListing = `public (active)
  target: default
  icmp-block-inversion: no
  interfaces: eth0
  sources: 
  services: cargoship dhcpv6-client ssh
  ports: 
  protocols: 
  forward: yes
  masquerade: no
  forward-ports: 
	port=8080:proto=tcp:toport=80:toaddr=
	port=8443:proto=tcp:toport=443:toaddr=
  source-ports: 
  icmp-blocks: 
  rich rules: 
	rule family="ipv4" source address="192.168.10.0/24" port port="10250" protocol="tcp" accept
	rule family="ipv6" source address="fd00::/64" accept

trusted (active)
  target: ACCEPT
  icmp-block-inversion: no
  interfaces: 
  sources: ipset:k8s-nodes ipset:k8s-subnets
  services: 
  ports: 
  protocols: 
  forward: yes
  masquerade: no
  forward-ports: 
  source-ports: 
  icmp-blocks: 
  rich rules: 

`

func TestParseZoneListing(t *testing.T) {
	names, zones := parseZoneListing(zoneListing)
	if !slices.Equal(names, []string{"public", "trusted"}) {
		t.Fatalf("zones %q", names)
	}
	pub, tr := zones["public"], zones["trusted"]
	if !slices.Equal(pub.services, []string{"cargoship", "dhcpv6-client", "ssh"}) || len(pub.sources) != 0 {
		t.Errorf("public = %+v", pub)
	}
	// the forward ports, tab-indented as rich rules are, are not rich rules
	want := []string{
		`rule family="ipv4" source address="192.168.10.0/24" port port="10250" protocol="tcp" accept`,
		`rule family="ipv6" source address="fd00::/64" accept`,
	}
	if !slices.Equal(pub.rich, want) {
		t.Errorf("public rich rules = %q, want %q", pub.rich, want)
	}
	if !slices.Equal(tr.sources, []string{"ipset:k8s-nodes", "ipset:k8s-subnets"}) || len(tr.rich) != 0 || len(tr.services) != 0 {
		t.Errorf("trusted = %+v", tr)
	}
	if got := parseServicePorts("cargoship\n  ports: 6443/tcp 30000-32767/tcp\n  protocols: \n"); !slices.Equal(got, []string{"6443/tcp", "30000-32767/tcp"}) {
		t.Errorf("service ports = %q", got)
	}
}

// TestFirewalldConvergedReadIsFewCalls: a converged plan reads firewalld
// in one round trip, and that read runs firewall-cmd (a Python start each
// time, seconds on a slow host) once for the zone, then for the permanent
// and the runtime configuration once for the ipsets, once for each of ours
// that exists, once for every zone, and once for the permanent service:
// 12 times with three of ours, where it took 17.
func TestFirewalldConvergedReadIsFewCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeFirewalld()
	f.Perm.Zones["public"].ForwardPorts = []string{"port=8080:proto=tcp:toport=80:toaddr="}
	f.Run.Zones["public"].ForwardPorts = f.Perm.Zones["public"].ForwardPorts
	h := newFakeHost(t, &fakeState{Firewalld: f})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	before := len(h.load(t).Calls)
	p, err := fw.Plan(ctx, h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if p.Changed() {
		t.Errorf("converged plan changes: %+v", p.Actions)
	}
	calls := h.load(t).Calls[before:]
	// three ipsets of ours exist (k8s-nodes, k8s-nodes6, k8s-subnets)
	if len(calls) > 12 {
		t.Errorf("a converged read ran firewall-cmd %d times: %q", len(calls), calls)
	}
	t.Logf("a converged read: %d firewall-cmd runs", len(calls))
}
