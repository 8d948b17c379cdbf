package firewall

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
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

	// primed is what DetectAll read with the detection: the next plan
	// uses it instead of asking the host again.
	primed *nftFacts
}

// Name implements Firewall.
func (*NFTables) Name() string { return NameNFTables }

// Detect implements Firewall: active means nft can list the ruleset.
func (n *NFTables) Detect(ctx context.Context, r host.Runner) (bool, bool, error) {
	return detectOne(ctx, r, n)
}

// nftDetect prints absent, present or active on its first line.
const nftDetect = `command -v nft >/dev/null 2>&1 || { echo absent; exit 0; }
if nft list tables >/dev/null 2>&1; then echo active; else echo present; fi
`

// detectScript detects nft and, where it is there, reads what Plan needs
// (nftState): DetectAll then asks once, and a converged host costs the
// whole phase one round trip.
func (n *NFTables) detectScript() string {
	return nftDetect + shell.Join("set", "--", NFTUnit, n.path(), n.unitPath(), maxNFTFileArg) + "\n" + nftState
}

func (*NFTables) parseDetect(out string) (bool, bool, error) {
	head, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return head != "absent", head == "active", nil
}

// prime keeps the facts DetectAll read with the detection, for the next
// plan to use instead of reading them again.
func (n *NFTables) prime(out string) error {
	_, rest, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if rest == "" {
		return nil // nft absent: plan reads, and says so
	}
	f, err := parseNFTFacts(rest)
	if err != nil {
		return err
	}
	n.primed = &f
	return nil
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
// chain on the input hook that drops by default, the unit's state, and the
// table file ($2) and unit file ($3) as base64 when they are files, at most
// $4 bytes of each (host.MaxReadFile+1 tells one too large).
const nftState = `echo "nft=$(command -v nft)"
if nft list table inet cargoship >/dev/null 2>&1; then echo table=yes; else echo table=no; fi
nft list chains 2>/dev/null | awk '/^table /{t=$2" "$3} /hook input/ && /policy drop/ {print "drops=" t}'
if [ -d /run/systemd/system ]; then
  echo "enabled=$(systemctl is-enabled "$1" 2>/dev/null || true)"
  echo "active=$(systemctl is-active "$1" 2>/dev/null || true)"
else echo systemd=no; fi
cs_file() { if [ -f "$2" ]; then printf '%s=' "$1"; head -c "$3" -- "$2" | base64 | tr -d '\n'; echo; fi; }
cs_file tablefile "$2" "$4"
cs_file unitfile "$3" "$4"`

// maxNFTFileArg is host.MaxReadFile+1, as head -c takes it.
var maxNFTFileArg = strconv.FormatInt(host.MaxReadFile+1, 10)

type nftFacts struct {
	nft             string
	table           bool
	drops           []string
	systemd         bool
	enabled, active string
	// tableFile and unitFile are the files' bytes, nil when absent.
	tableFile, unitFile []byte
}

// facts are the primed facts, once, or else read from the host.
func (n *NFTables) facts(ctx context.Context, r host.Runner) (nftFacts, error) {
	if f := n.primed; f != nil {
		n.primed = nil
		return *f, nil
	}
	return n.readFacts(ctx, r)
}

// readNFT reads the facts and requires nft.
func (n *NFTables) readNFT(ctx context.Context, r host.Runner) (nftFacts, error) {
	f, err := n.facts(ctx, r)
	if err == nil && f.nft == "" {
		err = fmt.Errorf("nft is not installed")
	}
	return f, err
}

// readFacts reads the facts; without nft, nft is "" and table false.
func (n *NFTables) readFacts(ctx context.Context, r host.Runner) (nftFacts, error) {
	out, err := r.Sudo(ctx, host.Script(nftState, NFTUnit, n.path(), n.unitPath(), maxNFTFileArg))
	if err != nil {
		return nftFacts{}, fmt.Errorf("reading nftables: %w", err)
	}
	return parseNFTFacts(out)
}

func parseNFTFacts(out string) (nftFacts, error) {
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
		case "tablefile", "unitfile":
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return f, fmt.Errorf("reading nftables: %s: %w", k, err)
			}
			if int64(len(b)) > host.MaxReadFile {
				return f, fmt.Errorf("reading nftables: the %s is larger than the %d bytes cargoship reads back", strings.TrimSuffix(k, "file"), host.MaxReadFile)
			}
			if b == nil {
				b = []byte{}
			}
			if k == "tablefile" {
				f.tableFile = b
			} else {
				f.unitFile = b
			}
		}
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
	facts, err := n.readNFT(ctx, r)
	if err != nil {
		return p, w, err
	}
	for _, t := range facts.drops {
		p.warnf("table %s drops input by default: an accept in %s cannot open what it drops; add the cluster's peers and ports to that table", t, NFTTable)
	}
	switch {
	case facts.tableFile == nil || string(facts.tableFile) != file:
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
	if facts.unitFile == nil || string(facts.unitFile) != w.unit {
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

// nftApply is Apply's one transaction: a new table file is written beside
// the old one, loaded, and only once nft accepted it moved into place (so a
// file in place is always the table that was loaded); an unchanged file
// that is not loaded is loaded; the boot unit is written, and enabled and
// started where it is not. Arguments: table path, table file (base64, ""
// when unchanged), load (yes/no), unit path, unit file (base64, "" when
// unchanged), enable, start (yes/no), unit name.
const nftApply = `set -e
` + host.WriteHelpers + `file=$1 table=$2 load=$3 unitpath=$4 unit=$5 enable=$6 start=$7 name=$8
if [ -n "$table" ]; then
	cs_put "$file.new" 0644 "$table"
	if ! out=$(nft -f "$file.new" 2>&1); then rm -f -- "$file.new"; printf 'loading %s: %s\n' "$file" "$out" >&2; exit 1; fi
	mv -f -- "$file.new" "$file"
	cs_sync "$(dirname -- "$file")"
elif [ "$load" = yes ]; then
	nft -f "$file"
fi
if [ -n "$unit" ]; then
	cs_put "$unitpath" 0644 "$unit"
	systemctl daemon-reload
fi
[ "$enable" != yes ] || systemctl enable "$name"
[ "$start" != yes ] || systemctl start "$name"`

// Apply implements Firewall: what plan found to do, in one round trip.
func (n *NFTables) Apply(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	p, w, err := n.plan(ctx, r, d)
	if err != nil || !p.Changed() {
		return p, err
	}
	var table, unit string
	if w.write {
		table = base64.StdEncoding.EncodeToString([]byte(w.file))
	}
	if w.unitChanged {
		unit = base64.StdEncoding.EncodeToString([]byte(w.unit))
	}
	if _, err := r.Sudo(ctx, host.Script(nftApply, n.path(), table, yesNo(w.load), n.unitPath(), unit, yesNo(w.enable), yesNo(w.start), NFTUnit)); err != nil {
		return Plan{}, fmt.Errorf("applying %s: %w", n.path(), err)
	}
	return p, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// nftHeader starts every table file renderNFT writes.
const nftHeader = "#!/usr/sbin/nft -f\n# Written by cargoship"

// ForgetNFT takes peers out of a table file RenderNFT wrote: their
// single-address elements leave the sets trusted4 and trusted6, and an
// emptied set loses its elements line, as renderNFT leaves it out. Every
// other line stays, so the result is RenderNFT of the same Desired with
// those peers gone: a peer's element is only ever itself (collapse keeps
// an address only when no listed network covers it, and an address covers
// nothing else). It returns the new file and the elements taken out.
func ForgetNFT(file string, addrs []string) (string, []string, error) {
	gone, err := parsePeers(addrs)
	if err != nil {
		return "", nil, err
	}
	if !strings.HasPrefix(file, nftHeader) {
		return "", nil, fmt.Errorf("not the table file cargoship writes (it starts %q)", nftHeader)
	}
	var dropped []string
	lines := strings.SplitAfter(file, "\n")
	inSet := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "set trusted4 {" || t == "set trusted6 {":
			inSet = true
		case inSet && t == "}":
			inSet = false
		case inSet && strings.HasPrefix(t, "elements = { ") && strings.HasSuffix(t, " }"):
			elems := strings.Split(strings.TrimSuffix(strings.TrimPrefix(t, "elements = { "), " }"), ", ")
			var keep []string
			for _, e := range elems {
				if isPeer(e, gone) {
					dropped = append(dropped, e)
				} else {
					keep = append(keep, e)
				}
			}
			switch {
			case len(keep) == len(elems):
			case len(keep) == 0:
				lines[i] = ""
			default:
				indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
				lines[i] = indent + "elements = { " + strings.Join(keep, ", ") + " }\n"
			}
		}
	}
	return strings.Join(lines, ""), dropped, nil
}

func (n *NFTables) forgetPlan(ctx context.Context, r host.Runner, addrs []string) (Plan, string, error) {
	var p Plan
	old, exists, err := host.ReadFileIfExists(ctx, r, n.path())
	if err != nil || !exists {
		return p, "", err
	}
	file, dropped, err := ForgetNFT(string(old), addrs)
	if err != nil {
		return p, "", fmt.Errorf("%s: %w", n.path(), err)
	}
	if len(dropped) > 0 {
		p.add(fmt.Sprintf("write %s without %s and load it", n.path(), strings.Join(dropped, ", ")), shell.Join("nft", "-f", n.path()))
	}
	return p, file, nil
}

// PlanForget implements Firewall.
func (n *NFTables) PlanForget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	p, _, err := n.forgetPlan(ctx, r, addrs)
	return p, err
}

// Forget implements Firewall: the table file without the peers is loaded
// as Apply loads one (one transaction, moved into place once nft took
// it). No table file is nothing to do.
func (n *NFTables) Forget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	p, file, err := n.forgetPlan(ctx, r, addrs)
	if err != nil || !p.Changed() {
		return p, err
	}
	if _, err := r.Sudo(ctx, host.Script(nftApply, n.path(), base64.StdEncoding.EncodeToString([]byte(file)), "no", n.unitPath(), "", "no", "no", NFTUnit)); err != nil {
		return Plan{}, fmt.Errorf("applying %s: %w", n.path(), err)
	}
	return p, nil
}

// nftDropTable deletes our table and only ours, and does not fail when it
// is already gone (docs/reference/hosts.md §5.3), as the unit's ExecStop.
const nftDropTable = "add table " + NFTTable + "; delete table " + NFTTable

type nftRemoval struct {
	stop, disable, unitFile, daemonReload, table bool
	files                                        []string
}

func (n *NFTables) removePlan(ctx context.Context, r host.Runner) (Plan, nftRemoval, error) {
	var p Plan
	var w nftRemoval
	facts, err := n.readFacts(ctx, r)
	if err != nil {
		return p, w, err
	}
	own := func(path string) (bool, error) {
		fi, err := host.Stat(ctx, r, path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case err != nil:
			return false, err
		case !fi.IsRegular():
			p.warnf("%s is not a regular file, so not cargoship's: left alone", path)
			return false, nil
		}
		return true, nil
	}
	if !n.NoUnit {
		if facts.systemd && slices.Contains([]string{"active", "activating", "reloading"}, facts.active) {
			w.stop = true
			p.add("stop "+NFTUnit+" (its stop deletes table "+NFTTable+" only)", shell.Join("systemctl", "stop", NFTUnit))
		}
		if facts.systemd && (facts.enabled == "enabled" || facts.enabled == "enabled-runtime") {
			w.disable = true
			p.add("disable "+NFTUnit, shell.Join("systemctl", "disable", NFTUnit))
		}
		if w.unitFile, err = own(n.unitPath()); err != nil {
			return p, w, err
		}
		if w.unitFile {
			p.add("remove "+n.unitPath(), "")
			if facts.systemd {
				w.daemonReload = true
				p.add("make systemd forget "+NFTUnit, "systemctl daemon-reload")
			}
		}
	}
	if facts.table {
		w.table = true
		p.add("delete table "+NFTTable, shell.Join("nft", nftDropTable))
	}
	for _, f := range []string{n.path(), n.path() + ".new"} {
		ok, err := own(f)
		if err != nil {
			return p, w, err
		}
		if ok {
			w.files = append(w.files, f)
			p.add("remove "+f, "")
		}
	}
	return p, w, nil
}

// PlanRemove implements Firewall.
func (n *NFTables) PlanRemove(ctx context.Context, r host.Runner) (Plan, error) {
	p, _, err := n.removePlan(ctx, r)
	return p, err
}

// Remove implements Firewall: cargoship's boot unit is stopped, disabled
// and removed, table inet cargoship deleted (no other table is touched,
// and nftables.service is neither stopped nor disabled), and the table
// file removed; then the table is checked to be gone. It needs no nft
// where there is no table.
func (n *NFTables) Remove(ctx context.Context, r host.Runner) (Plan, error) {
	p, w, err := n.removePlan(ctx, r)
	if err != nil || !p.Changed() {
		return p, err
	}
	var cmds []string
	if w.stop {
		cmds = append(cmds, shell.Join("systemctl", "stop", NFTUnit))
	}
	if w.disable {
		cmds = append(cmds, shell.Join("systemctl", "disable", NFTUnit))
	}
	if err := runScript(ctx, r, cmds); err != nil {
		return Plan{}, fmt.Errorf("stopping %s: %w", NFTUnit, err)
	}
	if w.unitFile {
		if _, err := hostos.RemoveFile(ctx, r, n.unitPath()); err != nil {
			return Plan{}, err
		}
	}
	if w.daemonReload {
		if _, err := r.Sudo(ctx, "systemctl daemon-reload"); err != nil {
			return Plan{}, fmt.Errorf("systemctl daemon-reload: %w", err)
		}
	}
	if w.table {
		if _, err := r.Sudo(ctx, shell.Join("nft", nftDropTable)); err != nil {
			return Plan{}, fmt.Errorf("deleting table %s: %w", NFTTable, err)
		}
		facts, err := n.readFacts(ctx, r)
		if err != nil {
			return Plan{}, err
		}
		if facts.table {
			return Plan{}, fmt.Errorf("%s: table %s is still loaded after deleting it", r, NFTTable)
		}
	}
	for _, f := range w.files {
		if _, err := hostos.RemoveFile(ctx, r, f); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}
