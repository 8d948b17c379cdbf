// Package fleet brings up fleets of Linux hosts on this machine for tests
// that need real hosts: systemd as PID 1, sshd, sudo, their own address,
// firewall and hostname. cargoship installs Kubernetes over SSH, so every
// phase it runs needs something to SSH into.
//
// A backend provides the hosts. Each lives in a package of its own that
// registers it by name when imported; this package holds what they share.
// The container backend (test/fleet/container, the default) runs each host
// as a systemd-nspawn container in its own network namespace on a
// per-fleet bridge; see docs/fleet.md for what such a host can and cannot
// do compared with a VM.
//
//	import _ "github.com/colonel-byte/cargoship/test/fleet/container"
//
//	p, _ := fleet.Backend("container")
//	f, err := p.Up(ctx, fleet.Spec{Name: "dev", Control: 1, Worker: 2})
//	out, _, err := f.Run(ctx, "kc0", "root", "hostname")
//	defer p.Down(ctx, "dev")
package fleet

import (
	"context"
	"fmt"
	"time"
)

// Users every host has.
const (
	// UserRoot logs in with the fleet key.
	UserRoot = "root"
	// UserTester logs in with the fleet key and has passwordless sudo.
	UserTester = "tester"
	// UserSudoPassword logs in with the fleet key; its sudo asks for the
	// fleet's SudoPassword, for testing the sudo-with-password path.
	UserSudoPassword = "sudopw"
)

// Roles and profiles as the cluster document spells them.
const (
	RoleController = "controller"
	RoleWorker     = "worker"
	ProfileInfra   = "infra"
)

// DefaultTimeout bounds a whole bring-up's wait for its hosts, not each host:
// all hosts are started before any is waited on.
const DefaultTimeout = 5 * time.Minute

// Spec says what fleet to bring up.
type Spec struct {
	// Name identifies the fleet (e.g. "dev", "e2e"): lower-case letters
	// and digits, starting with a letter, at most 12 characters. Fleets
	// with different names coexist.
	Name string
	// Control, Worker and Infra count hosts: kc0.. are controllers, kw0..
	// workers, ki0.. workers with profile "infra".
	Control, Worker, Infra int
	// Image names the backend's image: for the container backend
	// container.ImageBase or container.ImageExtra (the default).
	Image string
	// Timeout bounds the wait for every host to be ready; DefaultTimeout
	// when zero. Building the rootfs the first time is not counted.
	Timeout time.Duration
	// NodeRuntime makes every host able to run containerd, runc and a
	// real kubelet, as kind's node image does (container backend): each
	// host joins a cgroup of its own in every v1 hierarchy and sees them
	// writable inside its cgroup namespace, has all capabilities, no
	// seccomp filter, /dev/kmsg, a shared /, host-local copies of the
	// machine-wide sysctls kubelet sets, and /var/lib/containerd and
	// /var/lib/kubelet on this machine's filesystem. Such a host is
	// privileged, as a kind node is. See docs/fleet.md and
	// docs/reference/nested-kubelet.md.
	NodeRuntime bool
	// MemoryMiB and CPUs size each host of a backend that runs virtual
	// machines (microvm); zero means that backend's default. The container
	// backend's hosts share this machine's memory and cores.
	MemoryMiB, CPUs int
}

// Host is one machine of a fleet.
type Host struct {
	Name    string // hostname, e.g. kc0
	Address string // private address: where the other hosts reach it
	// SSHAddress and SSHPort are where the operator's SSH reaches the host
	// when that is not Address:22, as for a VM whose SSH is forwarded from
	// a port on this machine's loopback. Empty and zero mean Address and 22.
	SSHAddress string
	SSHPort    int
	Role       string // RoleController or RoleWorker
	Profile    string // controller, worker or infra
	// HostKey is the host's ed25519 public key in authorized_keys form.
	HostKey string
}

// Fleet is a fleet that is up.
type Fleet struct {
	Name    string
	Backend string
	Dir     string // state directory: keys, inventory, per-host dirs
	Hosts   []Host

	KeyPath        string // private key for root, tester and sudopw
	KnownHostsPath string // every host's keys, for strict host key checking
	InventoryPath  string // cargoship cluster document
	// SudoUser's sudo needs SudoPassword (generated per fleet).
	SudoUser     string
	SudoPassword string

	// HandshakeTimeout bounds an SSH handshake with a host (Dial); 10 s
	// when zero. An emulated guest on a loaded machine needs longer: its
	// sshd's key exchange runs on a CPU qemu emulates.
	HandshakeTimeout time.Duration

	// PrivateInterface is the interface holding each host's Address, as
	// the inventory names it; empty means eth0 (the container backend's).
	PrivateInterface string

	Subnet  string // e.g. 10.78.12.0/24
	Gateway string // the bridge's address on the subnet
	Bridge  string // host-side bridge name

	NodeRuntime bool // the hosts were brought up with Spec.NodeRuntime

	ssh sshClientCache
}

// Host returns the named host.
func (f *Fleet) Host(name string) (Host, error) {
	for _, h := range f.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("fleet %q has no host %q", f.Name, name)
}

// Role returns the hosts with the given role, in fleet order.
func (f *Fleet) Role(role string) []Host {
	var out []Host
	for _, h := range f.Hosts {
		if h.Role == role {
			out = append(out, h)
		}
	}
	return out
}

// Provider is a fleet backend.
type Provider interface {
	// Up brings a fleet up, waits until every host is ready, and writes
	// its inventory. It refuses a fleet of that name that is already up.
	Up(ctx context.Context, spec Spec) (*Fleet, error)
	// Get returns a fleet that is up.
	Get(ctx context.Context, name string) (*Fleet, error)
	// Down removes a fleet and every trace of it. Down of a fleet that is
	// not up is a no-op.
	Down(ctx context.Context, name string) error
	// List reports the fleets this backend knows of.
	List(ctx context.Context) ([]Status, error)
	// Shell opens an interactive root shell on one host, on this
	// process's terminal.
	Shell(ctx context.Context, name, host string) error
}

// Rebooter is a backend whose hosts can be rebooted for real: a new kernel
// boot that keeps the disk, for tests of what survives one.
type Rebooter interface {
	// Reboot reboots the named hosts of a fleet at once and waits until
	// each has booted again (a new boot ID) and is ready.
	Reboot(ctx context.Context, fleet string, hosts []string) error
}

// Status describes a fleet for List.
type Status struct {
	Name    string
	Backend string
	Dir     string
	Hosts   []HostStatus
	// Problems lists leftovers found without a complete state (a crashed
	// run): Down cleans them up.
	Problems []string
}

// HostStatus is a host's role, address and whether it is running.
type HostStatus struct {
	Host
	State string // "running", "stopped"
	PID   int    // the host's supervisor process, when running
}
