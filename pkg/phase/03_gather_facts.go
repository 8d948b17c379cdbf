package phase

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// GatherFacts reads each host's name, network, architecture, init system,
// SELinux mode, fapolicyd state and firewall front ends in one round trip.
type GatherFacts struct {
	readOnly
	base
}

// Title implements Phase.
func (p *GatherFacts) Title() string { return "Gather host facts" }

// factsScript only reads. Each line is key=value so one command answers
// everything; missing tools print nothing for their key. The SELinux mode
// comes from selinuxfs first, which needs no package, then getenforce or
// sestatus (docs/reference/hosts.md §6.1): minimal images lack getenforce.
const factsScript = `
echo "hostname=$(hostname 2>/dev/null)"
echo "fqdn=$(hostname -f 2>/dev/null || hostname)"
echo "arch=$(uname -m)"
if [ -d /run/systemd/system ]; then echo init=systemd; elif [ -d /run/openrc ]; then echo init=openrc; else echo "init=$(ps -p 1 -o comm= 2>/dev/null)"; fi
if [ -r /sys/fs/selinux/enforce ]; then
  if [ "$(cat /sys/fs/selinux/enforce)" = 1 ]; then echo selinux=enforcing; else echo selinux=permissive; fi
elif command -v getenforce >/dev/null 2>&1; then echo "selinux=$(getenforce 2>/dev/null | tr 'A-Z' 'a-z')"
elif command -v sestatus >/dev/null 2>&1; then sestatus 2>/dev/null | awk -F: '$1 ~ /^Current mode/ {gsub(/ /, "", $2); m=tolower($2)} END {print "selinux=" (m == "" ? "disabled" : m)}'
else echo selinux=absent; fi
echo "fapolicyd=$(systemctl is-active fapolicyd 2>/dev/null)"
if command -v firewall-cmd >/dev/null 2>&1; then echo "firewalld=$(systemctl is-active firewalld 2>/dev/null)"; fi
if command -v ufw >/dev/null 2>&1; then echo "ufw=$(ufw status 2>/dev/null | head -n1)"; fi
if command -v nft >/dev/null 2>&1; then echo nft=present; fi
ip -o -4 addr show scope global 2>/dev/null | awk '{print "addr=" $2 " " $4}'
ip -4 route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") print "defaultdev=" $(i+1); exit}'
`

// Run implements Phase.
func (p *GatherFacts) Run(ctx context.Context) error {
	s := p.state
	return s.Hosts.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		out, err := h.Conn.Sudo(ctx, host.Script(factsScript))
		if err != nil {
			return fmt.Errorf("reading facts: %w", err)
		}
		if err := applyFacts(h, out); err != nil {
			return err
		}
		s.Logger().Info("facts", "host", h.String(), "os", h.Facts.OSPretty, "arch", h.Facts.Arch,
			"address", h.Facts.PrivateAddress, "interface", h.Facts.PrivateInterface, "selinux", h.Facts.SELinux)
		return nil
	})
}

// ifaceAddr is one global IPv4 address and the interface holding it.
type ifaceAddr struct {
	iface string
	addr  netip.Addr
}

// applyFacts parses the facts script's output into h.Facts.
func applyFacts(h *node.Host, out string) error {
	var addrs []ifaceAddr
	var defaultDev string
	f := &h.Facts
	f.Firewalls = nil
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "hostname":
			f.Hostname = v
		case "fqdn":
			f.FQDN = v
		case "arch":
			f.Arch = NormalizeArch(v)
		case "init":
			f.InitSystem = v
		case "selinux":
			f.SELinux = v
		case "fapolicyd":
			f.Fapolicyd = v == "active"
		case "firewalld":
			f.Firewalls = append(f.Firewalls, node.FirewallFact{Name: "firewalld", Active: v == "active"})
		case "ufw":
			f.Firewalls = append(f.Firewalls, node.FirewallFact{Name: "ufw", Active: strings.Contains(v, "Status: active")})
		case "nft":
			f.Firewalls = append(f.Firewalls, node.FirewallFact{Name: "nftables", Active: true})
		case "addr":
			iface, cidr, _ := strings.Cut(v, " ")
			if pfx, err := netip.ParsePrefix(cidr); err == nil {
				addrs = append(addrs, ifaceAddr{iface: iface, addr: pfx.Addr()})
			}
		case "defaultdev":
			defaultDev = v
		}
	}
	if h.Spec.Hostname != "" {
		f.Hostname = h.Spec.Hostname
	}
	if f.Hostname == "" {
		return fmt.Errorf("the host reports no hostname and the inventory gives none")
	}
	if f.FQDN == "" {
		f.FQDN = f.Hostname
	}
	iface, addr, err := choosePrivate(h.Spec.PrivateInterface, h.Spec.PrivateAddress, h.Spec.Address(), defaultDev, addrs)
	if err != nil {
		return err
	}
	f.PrivateInterface, f.PrivateAddress = iface, addr
	return nil
}

// choosePrivate picks the private interface and address. Values the
// inventory gives win. Otherwise the address is the one the host holds that
// cargoship connects to (a multi-homed host's default route may be on an
// interface peers cannot reach: docs/reference/behaviour.md, "Choosing a
// host's private address"), and only then the default route.
func choosePrivate(wantIface, wantAddr, connAddr, defaultDev string, addrs []ifaceAddr) (string, string, error) {
	switch {
	case wantAddr != "":
		for _, a := range addrs {
			if a.addr.String() == wantAddr && (wantIface == "" || wantIface == a.iface) {
				return a.iface, wantAddr, nil
			}
		}
		if wantIface != "" {
			return wantIface, wantAddr, nil
		}
		return "", "", fmt.Errorf("privateAddress %s is not on any interface of the host (it has %s)", wantAddr, describe(addrs))
	case wantIface != "":
		for _, a := range addrs {
			if a.iface == wantIface {
				return a.iface, a.addr.String(), nil
			}
		}
		return "", "", fmt.Errorf("privateInterface %s holds no global IPv4 address (the host has %s)", wantIface, describe(addrs))
	}
	for _, a := range addrs {
		if a.addr.String() == connAddr {
			return a.iface, connAddr, nil
		}
	}
	for _, a := range addrs {
		if a.iface == defaultDev {
			return a.iface, a.addr.String(), nil
		}
	}
	if len(addrs) > 0 {
		return addrs[0].iface, addrs[0].addr.String(), nil
	}
	return "", "", fmt.Errorf("found no global IPv4 address; set privateAddress in the inventory")
}

func describe(addrs []ifaceAddr) string {
	if len(addrs) == 0 {
		return "none"
	}
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = a.addr.String() + " on " + a.iface
	}
	return strings.Join(parts, ", ")
}

// NormalizeArch maps uname -m to the architecture names packages use.
func NormalizeArch(m string) string {
	switch m {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "armv7l", "armv8l", "armhfp", "arm":
		return "arm"
	}
	return m
}
