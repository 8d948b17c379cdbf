package hostos

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// HostsPath is the static host name table.
const HostsPath = "/etc/hosts"

// The markers of the block cargoship owns in /etc/hosts.
const (
	HostsBegin = "# BEGIN cargoship managed"
	HostsEnd   = "# END cargoship managed"
)

// cloudInitMarker is the line cloud-init's hosts templates write when it
// re-renders /etc/hosts at every boot (docs/reference/hosts.md §4.3).
const cloudInitMarker = "# Your system has configured 'manage_etc_hosts' as True."

var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

// HostsEntry is one node: its private address and its names, the FQDN
// first, then the short name.
type HostsEntry struct {
	Address string
	Names   []string
}

// EtcHosts keeps a managed block in /etc/hosts with one line per node and
// leaves every byte outside the block as it was.
type EtcHosts struct {
	Entries []HostsEntry
	// Path defaults to HostsPath.
	Path string
}

func (e EtcHosts) path() string {
	return cmp.Or(e.Path, HostsPath)
}

// RenderHostsBlock renders the managed block, markers included, sorted by
// address so the inventory's order does not matter. An entry with no
// address is left out and named in skipped: written with an empty
// address, the line would have its first name read as the address. No
// usable entry renders no block.
func RenderHostsBlock(entries []HostsEntry) (block string, skipped []string, err error) {
	names := map[netip.Addr][]string{}
	for _, en := range entries {
		if strings.TrimSpace(en.Address) == "" {
			skipped = append(skipped, strings.Join(en.Names, " "))
			continue
		}
		addr, err := netip.ParseAddr(en.Address)
		if err != nil {
			return "", nil, fmt.Errorf("/etc/hosts: %q is not an IP address", en.Address)
		}
		for _, n := range en.Names {
			n = strings.TrimSuffix(n, ".")
			if n == "" {
				continue
			}
			if !hostName.MatchString(n) {
				return "", nil, fmt.Errorf("/etc/hosts: %q is not a host name", n)
			}
			if !slices.Contains(names[addr], n) {
				names[addr] = append(names[addr], n)
			}
		}
		if len(names[addr]) == 0 {
			return "", nil, fmt.Errorf("/etc/hosts: %s has no names", addr)
		}
	}
	if len(names) == 0 {
		return "", skipped, nil
	}
	addrs := make([]netip.Addr, 0, len(names))
	for a := range names {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	var b strings.Builder
	b.WriteString(HostsBegin + "\n")
	for _, a := range addrs {
		b.WriteString(a.String() + " " + strings.Join(names[a], " ") + "\n")
	}
	b.WriteString(HostsEnd + "\n")
	return b.String(), skipped, nil
}

// UpdateHostsFile puts block into an /etc/hosts body: it replaces the
// existing managed block, or appends one, or removes it when block is "".
// A begin marker without its end (or two blocks) is an error rather than a
// guess at which lines are ours.
func UpdateHostsFile(body []byte, block string) ([]byte, error) {
	lines := strings.SplitAfter(string(body), "\n")
	begin, end, err := findHostsBlock(lines)
	if err != nil {
		return nil, err
	}
	if begin >= 0 {
		rest := strings.Join(lines[end+1:], "")
		head := strings.Join(lines[:begin], "")
		return []byte(head + block + rest), nil
	}
	if block == "" {
		return body, nil
	}
	text := string(body)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return []byte(text + block), nil
}

// findHostsBlock returns the line numbers of the managed block's markers,
// -1 and -1 when there is none. A begin marker without its end (or two
// blocks) is an error rather than a guess at which lines are ours.
func findHostsBlock(lines []string) (begin, end int, err error) {
	begin, end = -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case HostsBegin:
			if begin >= 0 {
				return -1, -1, fmt.Errorf("/etc/hosts holds two %q lines; fix it by hand", HostsBegin)
			}
			begin = i
		case HostsEnd:
			if end >= 0 || begin < 0 {
				return -1, -1, fmt.Errorf("/etc/hosts holds a stray %q line; fix it by hand", HostsEnd)
			}
			end = i
		}
	}
	if begin >= 0 && end < 0 {
		return -1, -1, fmt.Errorf("/etc/hosts holds %q without %q; fix it by hand", HostsBegin, HostsEnd)
	}
	return begin, end, nil
}

// hostsWarnings names what would defeat the block: a node name mapped to
// another address outside it (resolvers take the first match, and
// Debian's 127.0.1.1 line is the usual culprit), and cloud-init
// re-rendering the file at boot.
func hostsWarnings(body []byte, entries []HostsEntry) []string {
	want := map[string][]string{} // a node may have an IPv4 and an IPv6 line
	for _, en := range entries {
		for _, n := range en.Names {
			if en.Address != "" {
				n = strings.TrimSuffix(n, ".")
				want[n] = append(want[n], en.Address)
			}
		}
	}
	var warns []string
	inBlock := false
	for _, l := range strings.Split(string(body), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == HostsBegin:
			inBlock = true
		case t == HostsEnd:
			inBlock = false
		case t == cloudInitMarker:
			warns = append(warns, "cloud-init rewrites /etc/hosts at every boot (manage_etc_hosts); add the block to /etc/cloud/templates/hosts.<distro>.tmpl or turn the module off")
		case inBlock || t == "" || strings.HasPrefix(t, "#"):
		default:
			f := strings.Fields(strings.SplitN(t, "#", 2)[0])
			for _, n := range f[1:] {
				if a, ok := want[n]; ok && !slices.Contains(a, f[0]) {
					warns = append(warns, fmt.Sprintf("%s also maps %s to %s, outside the managed block, and may win over %s", HostsPath, n, f[0], strings.Join(a, ", ")))
				}
			}
		}
	}
	return warns
}

func (e EtcHosts) plan(ctx context.Context, r host.Runner) ([]byte, Change, error) {
	var c Change
	block, skipped, err := RenderHostsBlock(e.Entries)
	if err != nil {
		return nil, c, err
	}
	for _, s := range skipped {
		c.warnf("no private address for %q: left out of %s", s, e.path())
	}
	old, _, err := host.ReadFileIfExists(ctx, r, e.path())
	if err != nil {
		return nil, c, err
	}
	body, err := UpdateHostsFile(old, block)
	if err != nil {
		return nil, c, err
	}
	c.Warnings = append(c.Warnings, hostsWarnings(body, e.Entries)...)
	if string(body) != string(old) {
		c.actionf("update the cargoship block in %s", e.path())
	}
	return body, c, nil
}

// Plan implements Step.
func (e EtcHosts) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := e.plan(ctx, r)
	return c, err
}

// Apply implements Step. /etc/hosts is bind-mounted in containers, where
// it can only be rewritten in place (docs/reference/hosts.md §4.4). Its
// mode and owner stay as they are.
func (e EtcHosts) Apply(ctx context.Context, r host.Runner) (Change, error) {
	body, c, err := e.plan(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	_, err = host.WriteFile(ctx, r, e.path(), body, 0, "", host.InPlace())
	return c, err
}
