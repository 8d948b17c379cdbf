package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// netLockPath serialises subnet choice and link changes across every process
// on this machine (not per state dir): two checkouts bringing up fleets at
// once must not pick the same /24, and a Down that removes /run/netns must
// not race an Up that is creating a namespace in it.
const netLockPath = "/run/lock/cargoship-fleet-net.lock"

const netnsDir = "/run/netns"

// usedOctets returns the X of every 10.78.X.0/24 that an address or route on
// this machine overlaps. Routes broader than /16 are ignored: a fleet's /24
// route on its bridge is more specific, so it wins on this machine anyway.
func usedOctets(ctx context.Context) (map[int]bool, error) {
	var prefixes []*net.IPNet
	out, err := command(ctx, "ip", "-j", "-4", "addr", "show")
	if err != nil {
		return nil, err
	}
	var links []struct {
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		return nil, fmt.Errorf("parse `ip -j addr`: %w", err)
	}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if _, n, err := net.ParseCIDR(fmt.Sprintf("%s/%d", a.Local, a.PrefixLen)); err == nil {
				prefixes = append(prefixes, n)
			}
		}
	}
	out, err = command(ctx, "ip", "-j", "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	var routes []struct {
		Dst string `json:"dst"`
	}
	if err := json.Unmarshal([]byte(out), &routes); err != nil {
		return nil, fmt.Errorf("parse `ip -j route`: %w", err)
	}
	for _, r := range routes {
		dst := r.Dst
		if dst == "" || dst == "default" {
			continue
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if _, n, err := net.ParseCIDR(dst); err == nil {
			prefixes = append(prefixes, n)
		}
	}
	return octetsOverlapping(prefixes), nil
}

// octetsOverlapping maps prefixes to the 10.78.X.0/24 subnets they overlap.
func octetsOverlapping(prefixes []*net.IPNet) map[int]bool {
	used := map[int]bool{}
	for _, p := range prefixes {
		if ones, _ := p.Mask.Size(); ones < 16 {
			continue
		}
		for x := 1; x <= 254; x++ {
			_, sub, _ := net.ParseCIDR(subnetCIDR(x))
			if sub.Contains(p.IP) || p.Contains(sub.IP) {
				used[x] = true
			}
		}
	}
	return used
}

// createBridge adds the fleet's bridge with the gateway address. IP
// forwarding on this machine is left as it is (off here), so nothing a host
// sends leaves the bridge.
func createBridge(ctx context.Context, br, gw string) error {
	steps := [][]string{
		{"link", "add", br, "type", "bridge"},
		{"addr", "add", gw + "/24", "dev", br},
		{"link", "set", br, "up"},
	}
	for _, s := range steps {
		if _, err := command(ctx, "ip", s...); err != nil {
			return fmt.Errorf("bridge %s: %w", br, err)
		}
	}
	return nil
}

// createHostNet gives a host its network namespace and a veth on the bridge:
// eth0 inside with a static address and a default route via the bridge.
func createHostNet(ctx context.Context, host, netns, veth, br, addr, gw string) error {
	steps := [][]string{
		{"netns", "add", netns},
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns},
		{"link", "set", veth, "master", br, "up"},
		{"-n", netns, "link", "set", "lo", "up"},
		{"-n", netns, "addr", "add", addr + "/24", "dev", "eth0"},
		{"-n", netns, "link", "set", "eth0", "up"},
		{"-n", netns, "route", "add", "default", "via", gw},
	}
	for _, s := range steps {
		if _, err := command(ctx, "ip", s...); err != nil {
			return fmt.Errorf("%s: network: %w", host, err)
		}
	}
	return nil
}

// listNetns returns the network namespaces in /run/netns with a prefix.
func listNetns(prefix string) []string {
	entries, _ := os.ReadDir(netnsDir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// listLinks returns the links in this machine's namespace with a prefix.
func listLinks(ctx context.Context, prefix string) ([]string, error) {
	out, err := command(ctx, "ip", "-j", "link", "show")
	if err != nil {
		return nil, err
	}
	var links []struct {
		IfName string `json:"ifname"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		return nil, fmt.Errorf("parse `ip -j link`: %w", err)
	}
	var names []string
	for _, l := range links {
		if strings.HasPrefix(l.IfName, prefix) {
			names = append(names, l.IfName)
		}
	}
	return names, nil
}

func linkExists(ctx context.Context, name string) bool {
	_, err := command(ctx, "ip", "link", "show", "dev", name)
	return err == nil
}

// deleteNetns removes a namespace; a missing one is not an error, so Down
// can be run twice.
func deleteNetns(ctx context.Context, name string) error {
	if !fileExists(netnsDir + "/" + name) {
		return nil
	}
	if _, err := command(ctx, "ip", "netns", "del", name); err != nil {
		return err
	}
	return nil
}

func deleteLink(ctx context.Context, name string) error {
	if !linkExists(ctx, name) {
		return nil
	}
	_, err := command(ctx, "ip", "link", "del", name)
	if err != nil && (strings.Contains(err.Error(), "Cannot find device") || strings.Contains(err.Error(), "No such device")) {
		// A veth goes with its peer when the peer's namespace is
		// deleted; it can vanish between the listing and the delete
		// (iproute2 says either, depending on where it loses it).
		return nil
	}
	return err
}

// tidyNetnsDir undoes what the first `ip netns add` did to this machine when
// no namespace is left: /run/netns is a bind mount onto itself.
func tidyNetnsDir() {
	entries, err := os.ReadDir(netnsDir)
	if err != nil || len(entries) > 0 {
		return
	}
	if isMounted(netnsDir) {
		if err := syscall.Unmount(netnsDir, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			return
		}
	}
	_ = os.Remove(netnsDir)
}
