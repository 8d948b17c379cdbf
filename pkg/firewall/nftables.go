package firewall

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Where the nftables front end keeps its table and how it loads it at
// boot. The file lives in /etc/cargoship, not /etc/nftables.d, so a
// distribution's include glob never loads it a second time.
const (
	NFTPath  = "/etc/cargoship/cargoship.nft"
	NFTUnit  = "cargoship-nftables.service"
	NFTTable = "inet cargoship"
)

// NFTables keeps cargoship's own table, inet cargoship, and touches no other
// table: never `flush ruleset` (docs/reference/hosts.md §5.3). The table is
// written as a file and loaded with nft -f, atomically (the add-then-delete
// idiom at the top of the file replaces the old table in the same
// transaction); it is loaded from a temporary file first and moved into place
// only once nft accepted it, so a file in place is always the table that was
// loaded. A dedicated unit loads it at boot and reloads it whenever the
// distribution's nftables.service (whose stop flushes the whole ruleset)
// restarts.
//
// The input chain keeps policy accept: cargoship never turns a host into
// a default-deny one over SSH. Its accepts therefore open nothing that
// another table drops (an accept is not final across tables); its drop and
// reject rules do hold. Plan warns about tables that drop input.
type NFTables struct {
	// Path defaults to NFTPath.
	Path string
	// NoUnit skips the boot unit (tests, or hosts without systemd).
	NoUnit bool
	// UnitDir defaults to /etc/systemd/system.
	UnitDir string
}

// Name implements Firewall.
func (*NFTables) Name() string { return NameNFTables }

// Detect implements Firewall: active means nft can list the ruleset.
func (*NFTables) Detect(ctx context.Context, r host.Runner) (bool, bool, error) {
	out, err := r.Sudo(ctx, host.Script(`command -v nft >/dev/null 2>&1 || { echo absent; exit 0; }; if nft list tables >/dev/null 2>&1; then echo active; else echo present; fi`))
	if err != nil {
		return false, false, fmt.Errorf("detecting nftables: %w", err)
	}
	out = strings.TrimSpace(out)
	return out != "absent", out == "active", nil
}

func (n *NFTables) path() string {
	return cmp.Or(n.Path, NFTPath)
}

func (n *NFTables) unitPath() string {
	return path.Join(cmp.Or(n.UnitDir, "/etc/systemd/system"), NFTUnit)
}

// RenderNFT renders the table file for d.
func RenderNFT(d Desired) (string, error) {
	s, err := normalize(d)
	if err != nil {
		return "", err
	}
	return renderNFT(s), nil
}

func renderNFT(s spec) string {
	var trusted4, trusted6 []netip.Prefix
	for _, a := range s.nodes4 {
		trusted4 = append(trusted4, netip.PrefixFrom(a, 32))
	}
	for _, a := range s.nodes6 {
		trusted6 = append(trusted6, netip.PrefixFrom(a, 128))
	}
	trusted4 = collapse(append(trusted4, s.nets4...))
	trusted6 = collapse(append(trusted6, s.nets6...))

	var b strings.Builder
	b.WriteString("#!/usr/sbin/nft -f\n")
	b.WriteString("# Written by cargoship: trusts the cluster's nodes and networks and opens its ports.\n")
	b.WriteString("# Changes here are overwritten on the next apply. Only this table is replaced.\n")
	b.WriteString("table " + NFTTable + "\n")
	b.WriteString("delete table " + NFTTable + "\n")
	b.WriteString("table " + NFTTable + " {\n")
	writeSet := func(name, typ string, elems []netip.Prefix) {
		fmt.Fprintf(&b, "\tset %s {\n\t\ttype %s\n\t\tflags interval\n", name, typ)
		if len(elems) > 0 {
			strs := make([]string, len(elems))
			for i, e := range elems {
				strs[i] = sourceString(e)
			}
			fmt.Fprintf(&b, "\t\telements = { %s }\n", strings.Join(strs, ", "))
		}
		b.WriteString("\t}\n")
	}
	writeSet("trusted4", "ipv4_addr", trusted4)
	writeSet("trusted6", "ipv6_addr", trusted6)
	b.WriteString("\tchain input {\n")
	// Before the distribution's filter chains (priority 0), policy accept.
	b.WriteString("\t\ttype filter hook input priority -10; policy accept;\n")
	for _, r := range s.rules {
		var m []string
		if r.source.IsValid() {
			fam := "ip"
			if r.source.Addr().Is6() {
				fam = "ip6"
			}
			m = append(m, fam+" saddr "+sourceString(r.source))
		}
		if r.port != nil {
			m = append(m, r.port.proto+" dport "+r.port.String())
		}
		fmt.Fprintf(&b, "\t\t%s %s comment \"rule %s\"\n", strings.Join(m, " "), r.action, r.name)
	}
	b.WriteString("\t\tip saddr @trusted4 accept comment \"cluster nodes and networks\"\n")
	b.WriteString("\t\tip6 saddr @trusted6 accept comment \"cluster nodes and networks\"\n")
	for _, proto := range []string{"tcp", "udp"} {
		var ports []string
		for _, p := range s.ports {
			if p.proto == proto {
				ports = append(ports, p.String())
			}
		}
		if len(ports) > 0 {
			fmt.Fprintf(&b, "\t\t%s dport { %s } accept comment \"cluster ports\"\n", proto, strings.Join(ports, ", "))
		}
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// renderNFTUnit is the boot unit: it loads the file, deletes only our
// table on stop, and follows nftables.service, whose stop flushes every
// table and whose reload reloads its own file over ours.
func renderNFTUnit(nft, file string) string {
	return `[Unit]
Description=cargoship nftables table (` + NFTTable + `)
Wants=network-pre.target
Before=network-pre.target
After=nftables.service
PartOf=nftables.service
ReloadPropagatedFrom=nftables.service
ConditionPathExists=` + file + `

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + nft + ` -f ` + file + `
ExecReload=` + nft + ` -f ` + file + `
ExecStop=` + nft + ` 'add table ` + NFTTable + `; delete table ` + NFTTable + `'

[Install]
WantedBy=multi-user.target
`
}

// nftState reads: where nft is, whether our table is loaded, every base
// chain on the input hook that drops by default, and the unit's state.
const nftState = `echo "nft=$(command -v nft)"
if nft list table inet cargoship >/dev/null 2>&1; then echo table=yes; else echo table=no; fi
nft list chains 2>/dev/null | awk '/^table /{t=$2" "$3} /hook input/ && /policy drop/ {print "drops=" t}'
if [ -d /run/systemd/system ]; then
  echo "enabled=$(systemctl is-enabled "$1" 2>/dev/null || true)"
  echo "active=$(systemctl is-active "$1" 2>/dev/null || true)"
else echo systemd=no; fi`

type nftFacts struct {
	nft             string
	table           bool
	drops           []string
	systemd         bool
	enabled, active string
}

func readNFT(ctx context.Context, r host.Runner) (nftFacts, error) {
	out, err := r.Sudo(ctx, host.Script(nftState, NFTUnit))
	if err != nil {
		return nftFacts{}, fmt.Errorf("reading nftables: %w", err)
	}
	f := nftFacts{systemd: true}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "nft":
			f.nft = v
		case "table":
			f.table = v == "yes"
		case "drops":
			if v != NFTTable {
				f.drops = append(f.drops, v)
			}
		case "systemd":
			f.systemd = false
		case "enabled":
			f.enabled = v
		case "active":
			f.active = v
		}
	}
	if f.nft == "" {
		return f, fmt.Errorf("nft is not installed")
	}
	return f, nil
}

// unitSafe is what a path may hold to go into a unit file unquoted.
var unitSafe = regexp.MustCompile(`^/[A-Za-z0-9/._-]+$`)

type nftWork struct {
	file, unit                              string
	load, write, unitChanged, enable, start bool
}

func (n *NFTables) plan(ctx context.Context, r host.Runner, d Desired) (Plan, nftWork, error) {
	var p Plan
	var w nftWork
	file, err := RenderNFT(d)
	if err != nil {
		return p, w, err
	}
	w.file = file
	facts, err := readNFT(ctx, r)
	if err != nil {
		return p, w, err
	}
	for _, t := range facts.drops {
		p.warnf("table %s drops input by default: an accept in %s cannot open what it drops; add the cluster's peers and ports to that table", t, NFTTable)
	}
	old, exists, err := host.ReadFileIfExists(ctx, r, n.path())
	if err != nil {
		return p, w, err
	}
	switch {
	case !exists || string(old) != file:
		w.load, w.write = true, true
		p.add("write "+n.path()+" and load it", shell.Join("nft", "-f", n.path()))
	case !facts.table:
		w.load = true
		p.add("load "+n.path()+": table "+NFTTable+" is not in the ruleset", shell.Join("nft", "-f", n.path()))
	}
	if n.NoUnit {
		return p, w, nil
	}
	if !facts.systemd {
		p.warnf("no systemd: %s is not loaded again at boot", n.path())
		return p, w, nil
	}
	if !unitSafe.MatchString(n.path()) || !unitSafe.MatchString(facts.nft) {
		return p, w, fmt.Errorf("%s or %s cannot be written into a unit file: use letters, digits and / . _ -", n.path(), facts.nft)
	}
	w.unit = renderNFTUnit(facts.nft, n.path())
	oldUnit, unitExists, err := host.ReadFileIfExists(ctx, r, n.unitPath())
	if err != nil {
		return p, w, err
	}
	if !unitExists || string(oldUnit) != w.unit {
		w.unitChanged = true
		p.add("write "+n.unitPath(), "")
	}
	if facts.enabled != "enabled" {
		w.enable = true
		p.add("enable "+NFTUnit+" so the table is loaded at boot", shell.Join("systemctl", "enable", NFTUnit))
	}
	if facts.active != "active" {
		w.start = true
		p.add("start "+NFTUnit, shell.Join("systemctl", "start", NFTUnit))
	}
	return p, w, nil
}

// Plan implements Firewall.
func (n *NFTables) Plan(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	p, _, err := n.plan(ctx, r, d)
	return p, err
}

// nftLoad loads the new file and only then moves it into place.
const nftLoad = `if ! out=$(nft -f "$1.new" 2>&1); then rm -f "$1.new"; echo "$out" >&2; exit 1; fi
mv -f "$1.new" "$1"`

// Apply implements Firewall.
func (n *NFTables) Apply(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	p, w, err := n.plan(ctx, r, d)
	if err != nil || !p.Changed() {
		return p, err
	}
	switch {
	case w.write:
		if _, err := host.WriteFile(ctx, r, n.path()+".new", []byte(w.file), 0o644, ""); err != nil {
			return Plan{}, err
		}
		if _, err := r.Sudo(ctx, host.Script(nftLoad, n.path())); err != nil {
			return Plan{}, fmt.Errorf("loading %s: %w", n.path(), err)
		}
	case w.load:
		if _, err := r.Sudo(ctx, shell.Join("nft", "-f", n.path())); err != nil {
			return Plan{}, fmt.Errorf("loading %s: %w", n.path(), err)
		}
	}
	if w.unitChanged {
		if _, err := host.WriteFile(ctx, r, n.unitPath(), []byte(w.unit), 0o644, ""); err != nil {
			return Plan{}, err
		}
		if _, err := r.Sudo(ctx, "systemctl daemon-reload"); err != nil {
			return Plan{}, fmt.Errorf("systemctl daemon-reload: %w", err)
		}
	}
	var cmds []string
	if w.enable {
		cmds = append(cmds, shell.Join("systemctl", "enable", NFTUnit))
	}
	if w.start {
		cmds = append(cmds, shell.Join("systemctl", "start", NFTUnit))
	}
	if err := runScript(ctx, r, cmds); err != nil {
		return Plan{}, fmt.Errorf("enabling %s: %w", NFTUnit, err)
	}
	return p, nil
}
