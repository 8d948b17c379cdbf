package hostos

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// ForgetHosts drops nodes that left the cluster from the managed block in
// /etc/hosts, on the hosts that stay: the lines of Addresses go, and so do
// the names those lines carried wherever else they appear in the block (a
// dual-stack line of the same node). The block that remains is exactly
// what RenderHostsBlock renders for the remaining entries, so a later
// EtcHosts with the inventory less those nodes finds nothing to do; no
// entry left removes the block, as EtcHosts does. Every byte outside the
// block stays as it is (docs/reference/hosts.md §4.2). No file, no block,
// or none of Addresses in it changes nothing. Empty addresses are ignored:
// a node without a private address was never written into the block.
type ForgetHosts struct {
	Addresses []string
	// Path defaults to HostsPath.
	Path string
}

func (f ForgetHosts) path() string {
	return cmp.Or(f.Path, HostsPath)
}

// parseAddrs parses addresses, skipping empty ones; IPv4-mapped IPv6
// addresses are unmapped.
func parseAddrs(addrs []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address", a)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// hostsBlockEntries reads the lines between the markers back into entries,
// in file order. A line that is not an address and names was not written
// by RenderHostsBlock: an error, not a guess.
func hostsBlockEntries(lines []string, begin, end int) ([]HostsEntry, error) {
	var entries []HostsEntry
	for _, l := range lines[begin+1 : end] {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(strings.SplitN(t, "#", 2)[0])
		if _, err := netip.ParseAddr(f[0]); err != nil || len(f) < 2 {
			return nil, fmt.Errorf("the cargoship block in /etc/hosts holds %q, which is not an address and its names; fix it by hand", t)
		}
		entries = append(entries, HostsEntry{Address: f[0], Names: f[1:]})
	}
	return entries, nil
}

// ForgetHostsBlock drops addrs from the managed block of an /etc/hosts
// body, as ForgetHosts describes, and returns the new body and the entries
// dropped. A body with no block, or none of addrs in it, comes back as it
// was.
func ForgetHostsBlock(body []byte, addrs []string) ([]byte, []HostsEntry, error) {
	gone, err := parseAddrs(addrs)
	if err != nil {
		return nil, nil, fmt.Errorf("/etc/hosts: %w", err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	begin, end, err := findHostsBlock(lines)
	if err != nil || begin < 0 || len(gone) == 0 {
		return body, nil, err
	}
	entries, err := hostsBlockEntries(lines, begin, end)
	if err != nil {
		return nil, nil, err
	}
	var dropped, kept []HostsEntry
	var names []string
	for _, en := range entries {
		if a, _ := netip.ParseAddr(en.Address); slices.Contains(gone, a.Unmap()) {
			dropped = append(dropped, en)
			names = append(names, en.Names...)
			continue
		}
		kept = append(kept, en)
	}
	if len(dropped) == 0 {
		return body, nil, nil
	}
	var remain []HostsEntry
	for _, en := range kept {
		var left []string
		for _, n := range en.Names {
			if !slices.Contains(names, n) {
				left = append(left, n)
			}
		}
		if len(left) == 0 {
			dropped = append(dropped, en)
			continue
		}
		remain = append(remain, HostsEntry{Address: en.Address, Names: left})
	}
	block, _, err := RenderHostsBlock(remain)
	if err != nil {
		return nil, nil, err
	}
	out, err := UpdateHostsFile(body, block)
	return out, dropped, err
}

func (f ForgetHosts) plan(ctx context.Context, r host.Runner) ([]byte, Change, error) {
	var c Change
	old, exists, err := host.ReadFileIfExists(ctx, r, f.path())
	if err != nil || !exists {
		return nil, c, err
	}
	body, dropped, err := ForgetHostsBlock(old, f.Addresses)
	if err != nil {
		return nil, c, err
	}
	for _, en := range dropped {
		c.actionf("forget %s (%s) in the cargoship block of %s", en.Address, strings.Join(en.Names, " "), f.path())
	}
	return body, c, nil
}

// Plan implements Step.
func (f ForgetHosts) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := f.plan(ctx, r)
	return c, err
}

// Apply implements Step. It writes as EtcHosts does: in place when the
// file is a bind mount (docs/reference/hosts.md §4.4), mode and owner kept.
func (f ForgetHosts) Apply(ctx context.Context, r host.Runner) (Change, error) {
	body, c, err := f.plan(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	_, err = host.WriteFile(ctx, r, f.path(), body, 0, "", host.InPlace())
	return c, err
}
