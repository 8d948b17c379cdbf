package container

import (
	"net"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

func TestLinkNamesFitTheKernelLimit(t *testing.T) {
	for _, name := range []string{"dev", "e2e", "abcdef", "abcdefg", "abcdefghijkl"} {
		for _, host := range []string{"kc0", "kw99", "ki99"} {
			for _, link := range []string{bridgeName(name), vethName(name, host)} {
				if len(link) > 15 {
					t.Errorf("fleet %q host %q: link name %q is %d chars; the kernel allows 15", name, host, link, len(link))
				}
			}
		}
	}
	if bridgeName("dev") != "csbr-dev" || vethName("dev", "kc0") != "csvdev-kc0" || netnsName("dev", "kc0") != "cs-dev-kc0" {
		t.Errorf("short names should be readable: %s %s %s", bridgeName("dev"), vethName("dev", "kc0"), netnsName("dev", "kc0"))
	}
	// Long names are shortened with a hash, so two long names that share a
	// beginning still get different links.
	if fleetTag("abcdefgh") == fleetTag("abcdefgx") {
		t.Errorf("fleetTag collides for names sharing a prefix: %s", fleetTag("abcdefgh"))
	}
	// One fleet's prefix must not match another fleet's names.
	if strings.HasPrefix(vethName("dev2", "kc0"), vethPrefix("dev")) || strings.HasPrefix(netnsName("dev2", "kc0"), netnsPrefix("dev")) {
		t.Error("fleet dev's prefixes match fleet dev2's links")
	}
}

func TestChooseOctet(t *testing.T) {
	want := preferredOctet("dev")
	if want < 1 || want > 254 {
		t.Fatalf("preferredOctet(dev) = %d, want 1..254", want)
	}
	got, err := chooseOctet("dev", nil)
	if err != nil || got != want {
		t.Fatalf("chooseOctet(dev, none used) = %d, %v; want %d (deterministic)", got, err, want)
	}
	got, _ = chooseOctet("dev", map[int]bool{want: true})
	if got == want {
		t.Fatalf("chooseOctet returned the used octet %d", got)
	}
	all := map[int]bool{}
	for i := 1; i <= 254; i++ {
		all[i] = true
	}
	if _, err := chooseOctet("dev", all); err == nil {
		t.Fatal("chooseOctet with every octet used should fail")
	}
}

func TestOctetsOverlapping(t *testing.T) {
	parse := func(s string) *net.IPNet {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	used := octetsOverlapping([]*net.IPNet{
		parse("10.78.5.0/24"),    // an existing fleet's bridge route
		parse("10.78.7.9/32"),    // a host route
		parse("10.78.32.0/22"),   // 32..35
		parse("192.168.1.0/24"),  // elsewhere
		parse("10.0.0.0/8"),      // too broad to count: our /24 would win
		parse("10.78.200.1/24"),  // an address on some link
		parse("172.16.0.0/16"),   // elsewhere
		parse("10.79.0.0/16"),    // next door
		parse("10.78.100.64/26"), // part of a /24
	})
	for _, o := range []int{5, 7, 32, 33, 34, 35, 200, 100} {
		if !used[o] {
			t.Errorf("octet %d should be in use", o)
		}
	}
	if len(used) != 8 {
		t.Errorf("used = %v, want exactly 8 octets", used)
	}
}

func TestPlanHosts(t *testing.T) {
	hosts, err := planHosts(fleet.Spec{Name: "dev", Control: 2, Worker: 2, Infra: 1}, 42)
	if err != nil {
		t.Fatal(err)
	}
	want := []fleet.Host{
		{Name: "kc0", Address: "10.78.42.11", Role: fleet.RoleController, Profile: fleet.RoleController},
		{Name: "kc1", Address: "10.78.42.12", Role: fleet.RoleController, Profile: fleet.RoleController},
		{Name: "kw0", Address: "10.78.42.13", Role: fleet.RoleWorker, Profile: fleet.RoleWorker},
		{Name: "kw1", Address: "10.78.42.14", Role: fleet.RoleWorker, Profile: fleet.RoleWorker},
		{Name: "ki0", Address: "10.78.42.15", Role: fleet.RoleWorker, Profile: fleet.ProfileInfra},
	}
	if len(hosts) != len(want) {
		t.Fatalf("got %d hosts, want %d: %+v", len(hosts), len(want), hosts)
	}
	for i := range want {
		if hosts[i] != want[i] {
			t.Errorf("host %d = %+v, want %+v", i, hosts[i], want[i])
		}
	}
	if subnetCIDR(42) != "10.78.42.0/24" || gatewayAddr(42) != "10.78.42.1" {
		t.Errorf("subnet %s gateway %s", subnetCIDR(42), gatewayAddr(42))
	}
}
