package fleet

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// forwardedFleet is a fleet whose SSH answers on forwarded loopback ports,
// as a VM backend's does, and whose private interface is not eth0.
func forwardedFleet(t *testing.T) *Fleet {
	f := testFleet(t)
	for i := range f.Hosts {
		f.Hosts[i].SSHAddress = "127.0.0.1"
		f.Hosts[i].SSHPort = 2200 + i
	}
	f.PrivateInterface = "enp0s4"
	return f
}

func TestSSHEndpointDefaultsToTheAddressOnPort22(t *testing.T) {
	h := Host{Name: "kc0", Address: "10.78.9.11"}
	if a, p := h.SSHEndpoint(); a != "10.78.9.11" || p != 22 {
		t.Errorf("SSHEndpoint() = %s %d, want 10.78.9.11 22", a, p)
	}
	h.SSHAddress, h.SSHPort = "127.0.0.1", 2201
	if a, p := h.SSHEndpoint(); a != "127.0.0.1" || p != 2201 {
		t.Errorf("SSHEndpoint() = %s %d, want 127.0.0.1 2201", a, p)
	}
	if got := h.sshHostPort(); got != "127.0.0.1:2201" {
		t.Errorf("sshHostPort() = %s", got)
	}
}

func TestInventoryNamesForwardedSSHAndThePrivateAddress(t *testing.T) {
	f := forwardedFleet(t)
	c := loadInventory(t, renderInventory(f, UserRoot))
	for i, h := range c.Spec.Hosts {
		if h.SSH.Address != "127.0.0.1" || h.SSH.Port != 2200+i {
			t.Errorf("%s: ssh %s:%d, want 127.0.0.1:%d", h.Hostname, h.SSH.Address, h.SSH.Port, 2200+i)
		}
		if h.PrivateAddress != f.Hosts[i].Address || h.PrivateInterface != "enp0s4" {
			t.Errorf("%s: private %s on %s, want %s on enp0s4", h.Hostname, h.PrivateAddress, h.PrivateInterface, f.Hosts[i].Address)
		}
	}
	// the other hosts join through the leader's private address, not the
	// loopback the operator reaches it on
	if c.Spec.Config.Loadbalancer != f.Hosts[0].Address {
		t.Errorf("loadbalancer = %q, want %q", c.Spec.Config.Loadbalancer, f.Hosts[0].Address)
	}
}

func TestKnownHostsNamesAForwardedPortAsOpenSSHDoes(t *testing.T) {
	f := forwardedFleet(t)
	dir := t.TempDir()
	kd, err := ensureHostKeys(dir, "dev", "kc0")
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := hostPublicKeys(kd)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]ssh.PublicKey{"kc0": pubs}
	path := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(path, renderKnownHosts(keys, f.Hosts[:1]), 0o644); err != nil {
		t.Fatal(err)
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		t.Fatal(err)
	}
	at := func(port int) error {
		return cb(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: port}, pubs[0])
	}
	if err := at(2200); err != nil {
		t.Errorf("kc0's key on its forwarded port rejected: %v", err)
	}
	// another guest's forward on the same loopback is another host
	if err := at(2201); err == nil {
		t.Error("kc0's key accepted for the port forwarded to kc1")
	}
}

func TestSSHArgsPassTheForwardedPort(t *testing.T) {
	f := forwardedFleet(t)
	args := SSHArgs(f, f.Hosts[1], UserRoot)
	i := slices.Index(args, "-p")
	if i < 0 || args[i+1] != "2201" || args[len(args)-1] != "root@127.0.0.1" {
		t.Errorf("SSHArgs = %q, want -p 2201 ... root@127.0.0.1", args)
	}
	plain := testFleet(t)
	if slices.Contains(SSHArgs(plain, plain.Hosts[0], UserRoot), "-p") {
		t.Error("SSHArgs passes -p for a host on port 22")
	}
}
