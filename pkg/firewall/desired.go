package firewall

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// portRange is a port or range and its protocol.
type portRange struct {
	lo, hi int
	proto  string
}

// String is firewalld's and nft's spelling: 6443 or 30000-32767.
func (p portRange) String() string {
	if p.lo == p.hi {
		return strconv.Itoa(p.lo)
	}
	return fmt.Sprintf("%d-%d", p.lo, p.hi)
}

// rule is a validated FirewallRule.
type rule struct {
	name   string
	source netip.Prefix // invalid when the rule has no source
	port   *portRange
	action string // accept, drop, reject
}

// spec is a validated, canonical Desired: sorted, de-duplicated, CIDRs
// masked, addresses covered by a listed network dropped, port ranges
// merged. Every front end renders from it, so equal documents render
// byte-equal configurations.
type spec struct {
	nodes4, nodes6 []netip.Addr
	nets4, nets6   []netip.Prefix
	ports          []portRange
	rules          []rule
	iface          string
}

var ruleName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func normalize(d Desired) (spec, error) {
	var s spec
	for _, p := range d.Peers {
		a, err := netip.ParseAddr(strings.TrimSpace(p))
		if err != nil {
			return s, fmt.Errorf("peer %q is not an IP address", p)
		}
		a = a.Unmap()
		if a.Is4() {
			s.nodes4 = append(s.nodes4, a)
		} else {
			s.nodes6 = append(s.nodes6, a)
		}
	}
	for _, c := range d.CIDRs {
		p, err := parseSource(c)
		if err != nil {
			return s, fmt.Errorf("CIDR %q: %w", c, err)
		}
		if p.Addr().Is4() {
			s.nets4 = append(s.nets4, p)
		} else {
			s.nets6 = append(s.nets6, p)
		}
	}
	s.nodes4, s.nodes6 = sortAddrs(s.nodes4), sortAddrs(s.nodes6)
	s.nets4, s.nets6 = collapse(s.nets4), collapse(s.nets6)
	for _, p := range d.Ports {
		pr, err := parsePort(string(p.Port), p.Protocol)
		if err != nil {
			return s, err
		}
		s.ports = append(s.ports, *pr)
	}
	s.ports = mergePorts(s.ports)
	for i, fr := range d.Rules {
		r := rule{name: ruleName.ReplaceAllString(fr.Name, "-"), action: fr.Action}
		if r.name == "" {
			r.name = strconv.Itoa(i + 1)
		}
		if r.action == "" {
			r.action = "accept"
		}
		if !slices.Contains([]string{"accept", "drop", "reject"}, r.action) {
			return s, fmt.Errorf("rule %s: action %q is not accept, drop or reject", r.name, fr.Action)
		}
		if fr.Source != "" {
			p, err := parseSource(fr.Source)
			if err != nil {
				return s, fmt.Errorf("rule %s: source %q: %w", r.name, fr.Source, err)
			}
			r.source = p
		}
		if fr.Port != "" {
			pr, err := parsePort(string(fr.Port), fr.Protocol)
			if err != nil {
				return s, fmt.Errorf("rule %s: %w", r.name, err)
			}
			r.port = pr
		} else if fr.Protocol != "" {
			return s, fmt.Errorf("rule %s: a protocol needs a port", r.name)
		}
		if !r.source.IsValid() && r.port == nil {
			return s, fmt.Errorf("rule %s: needs a source, a port or both", r.name)
		}
		s.rules = append(s.rules, r)
	}
	s.iface = d.Interface
	return s, nil
}

// parseSource takes an address (as a host prefix) or a CIDR, masked.
func parseSource(v string) (netip.Prefix, error) {
	v = strings.TrimSpace(v)
	if a, err := netip.ParseAddr(v); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(v)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not an address or CIDR")
	}
	return p.Masked(), nil
}

func parsePort(v, proto string) (*portRange, error) {
	lo, hi, _, err := splitRange(v)
	if err != nil {
		return nil, err
	}
	if proto == "" {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" {
		return nil, fmt.Errorf("port %s: protocol %q is not tcp or udp", v, proto)
	}
	return &portRange{lo: lo, hi: hi, proto: proto}, nil
}

// splitRange parses "6443" or "30000-32767" (also ufw's "30000:32767").
func splitRange(v string) (int, int, bool, error) {
	v = strings.ReplaceAll(strings.TrimSpace(v), ":", "-")
	a, b, isRange := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(a)
	hi := lo
	var err2 error
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || hi < lo {
		return 0, 0, false, fmt.Errorf("%q is not a port (1-65535) or a range like 30000-32767", v)
	}
	return lo, hi, isRange, nil
}

func sortAddrs(as []netip.Addr) []netip.Addr {
	sort.Slice(as, func(i, j int) bool { return as[i].Less(as[j]) })
	return slices.Compact(as)
}

// collapse drops networks inside another listed network and sorts: nft
// interval sets refuse overlapping elements.
func collapse(ps []netip.Prefix) []netip.Prefix {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Bits() != ps[j].Bits() {
			return ps[i].Bits() < ps[j].Bits()
		}
		return ps[i].Addr().Less(ps[j].Addr())
	})
	var out []netip.Prefix
	for _, p := range ps {
		covered := false
		for _, k := range out {
			if k.Bits() <= p.Bits() && k.Contains(p.Addr()) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr().Less(out[j].Addr()) })
	return out
}

// mergePorts sorts by protocol and port and merges overlapping or
// adjacent ranges of one protocol.
func mergePorts(ps []portRange) []portRange {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].proto != ps[j].proto {
			return ps[i].proto < ps[j].proto
		}
		return ps[i].lo < ps[j].lo || ps[i].lo == ps[j].lo && ps[i].hi < ps[j].hi
	})
	var out []portRange
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].proto == p.proto && p.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, p.hi)
			continue
		}
		out = append(out, p)
	}
	return out
}

// isHost reports whether a source prefix is a single address.
func isHost(p netip.Prefix) bool { return p.Bits() == p.Addr().BitLen() }

// sourceString is an address for a single host, a CIDR otherwise.
func sourceString(p netip.Prefix) string {
	if isHost(p) {
		return p.Addr().String()
	}
	return p.String()
}

// parsePeers parses the addresses Forget is given, as normalize parses
// Desired.Peers (IPv4-mapped addresses unmapped); empty ones are skipped.
func parsePeers(addrs []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return nil, fmt.Errorf("peer %q is not an IP address", a)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// isPeer reports whether s, an address or CIDR as a front end prints it,
// is the single address of one of peers.
func isPeer(s string, peers []netip.Addr) bool {
	p, err := parseSource(s)
	return err == nil && isHost(p) && slices.Contains(peers, p.Addr())
}
