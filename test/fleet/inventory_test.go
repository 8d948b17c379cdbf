package fleet

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// loadInventory reads an inventory with cargoship's own loader, the one
// `cargoship apply --config` uses: anything it rejects fails here.
func loadInventory(t *testing.T, b []byte) *v1alpha1.Cluster {
	t.Helper()
	c, findings, err := v1alpha1.ParseCluster("inventory.yaml", b)
	if err != nil {
		t.Fatalf("cargoship rejects the inventory: %v\n%s", err, b)
	}
	for _, f := range findings {
		t.Logf("loader: %v", f)
	}
	return c
}

func testFleet(t *testing.T) *Fleet {
	hosts, err := planHosts(Spec{Name: "dev", Control: 2, Worker: 1, Infra: 1}, addressIn(9))
	if err != nil {
		t.Fatal(err)
	}
	hosts[0].HostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOoI/eaNK+ewmiN1kXZdVFlJ6t28KhP499Zkxh6LbGMQ"
	dir := "/tmp/a dir: with spaces/dev" // a path that needs quoting
	return NewFleet(dir, "dev", "container", hosts, "pw123", "")
}

// addressIn numbers hosts from .11 of 10.78.octet.0/24, as the container
// backend does.
func addressIn(octet int) func(i int) string {
	return func(i int) string { return fmt.Sprintf("10.78.%d.%d", octet, 11+i) }
}

func TestInventoryIsAClusterDocument(t *testing.T) {
	f := testFleet(t)
	b := renderInventory(f, UserRoot)
	c := loadInventory(t, b)
	if c.APIVersion != "colonel-byte.dev/v1alpha1" || c.Kind != "Cluster" || c.Metadata.Name != "dev" {
		t.Errorf("header: %s %s %s", c.APIVersion, c.Kind, c.Metadata.Name)
	}
	if c.Spec.Config.Loadbalancer != "10.78.9.11" {
		t.Errorf("loadbalancer = %q, want the first controller's address", c.Spec.Config.Loadbalancer)
	}
	if len(c.Spec.Hosts) != 4 {
		t.Fatalf("%d hosts, want 4", len(c.Spec.Hosts))
	}
	want := []struct{ name, addr, role, profile string }{
		{"kc0", "10.78.9.11", "controller", "controller"},
		{"kc1", "10.78.9.12", "controller", "controller"},
		{"kw0", "10.78.9.13", "worker", "worker"},
		{"ki0", "10.78.9.14", "worker", "infra"},
	}
	for i, w := range want {
		h := c.Spec.Hosts[i]
		if h.SSH == nil {
			t.Fatalf("host %d has no ssh block", i)
		}
		if h.Hostname != w.name || h.SSH.Address != w.addr || h.PrivateAddress != w.addr ||
			h.Role != w.role || h.Profile != w.profile || h.PrivateInterface != "eth0" ||
			h.SSH.User != "root" || h.SSH.Port != 22 || h.SSH.KeyPath != "/tmp/a dir: with spaces/dev/id_fleet" {
			t.Errorf("host %d = %+v %+v, want %+v", i, h, *h.SSH, w)
		}
	}
	if c.Spec.Hosts[0].SSH.HostKey != f.Hosts[0].HostKey || c.Spec.Hosts[1].SSH.HostKey != "" {
		t.Errorf("hostKey: %q / %q", c.Spec.Hosts[0].SSH.HostKey, c.Spec.Hosts[1].SSH.HostKey)
	}
	// The layout users see in the docs: two-space indent, hosts as a list of ssh blocks.
	if !strings.Contains(string(b), "\n  hosts:\n    - ssh:\n        address: 10.78.9.11\n        user: root\n        port: 22\n") {
		t.Errorf("unexpected layout:\n%s", b)
	}
	if !strings.Contains(string(b), "pw123") {
		t.Error("the inventory should say what the sudo password is")
	}
}

func TestInventoryForTheSudoPasswordUser(t *testing.T) {
	c := loadInventory(t, testFleet(t).Inventory(UserSudoPassword))
	for _, h := range c.Spec.Hosts {
		if h.SSH.User != UserSudoPassword || h.SudoPasswordEnv != SudoPasswordEnv {
			t.Errorf("%s: user %q sudoPasswordEnv %q", h.Hostname, h.SSH.User, h.SudoPasswordEnv)
		}
	}
}

func TestInventoryWithoutControllers(t *testing.T) {
	hosts, _ := planHosts(Spec{Name: "w", Worker: 1}, addressIn(3))
	b := renderInventory(NewFleet("/f", "w", "", hosts, "", ""), UserRoot)
	// cargoship refuses an inventory without a controller; the fleet still
	// renders one (for tests of that refusal) with no load balancer.
	if !strings.Contains(string(b), "  config: {}\n") || !strings.Contains(string(b), "hostname: kw0") {
		t.Errorf("unexpected inventory:\n%s", b)
	}
}

func TestKnownHostsChecksEveryHostKey(t *testing.T) {
	f := testFleet(t)
	dir := t.TempDir()
	keys := map[string][]ssh.PublicKey{}
	for _, h := range f.Hosts {
		kd, err := ensureHostKeys(dir, "dev", h.Name)
		if err != nil {
			t.Fatal(err)
		}
		if keys[h.Name], err = hostPublicKeys(kd); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(path, renderKnownHosts(keys, f.Hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(h Host) net.Addr { return &net.TCPAddr{IP: net.ParseIP(h.Address), Port: 22} }
	for _, h := range f.Hosts {
		for _, k := range keys[h.Name] {
			if err := cb(h.Address+":22", addr(h), k); err != nil {
				t.Errorf("%s %s rejected: %v", h.Name, k.Type(), err)
			}
		}
	}
	// Another host's key, or a stranger's, is refused: no trust on first use.
	if err := cb(f.Hosts[0].Address+":22", addr(f.Hosts[0]), keys[f.Hosts[1].Name][0]); err == nil {
		t.Error("kc1's key accepted for kc0")
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	stranger, _ := ssh.NewPublicKey(pub)
	if err := cb("10.78.9.99:22", &net.TCPAddr{IP: net.ParseIP("10.78.9.99"), Port: 22}, stranger); err == nil {
		t.Error("unknown host accepted")
	}
}
