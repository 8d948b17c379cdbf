package firewall

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// Names cargoship owns in firewalld's configuration.
const (
	IPSetNodes     = "k8s-nodes"    // hash:ip, IPv4 peers
	IPSetNodes6    = "k8s-nodes6"   // hash:ip, family inet6
	IPSetSubnets   = "k8s-subnets"  // hash:net, IPv4 pod and service CIDRs
	IPSetSubnets6  = "k8s-subnets6" // hash:net, family inet6
	FirewalldServ  = "cargoship"    // the service holding the ports
	TrustedZone    = "trusted"      // where the ipsets are sources
	RichRulesState = "/var/lib/cargoship/firewalld-rich-rules"
)

// Firewalld configures firewalld: peers and cluster networks as ipsets
// bound to the trusted zone, ports as the service "cargoship" enabled in
// the private interface's zone, rules as rich rules there. Every change is
// made with --permanent and then made live with one --reload (the earlier
// tool never reloaded, so its ipsets did not exist at runtime), and a
// runtime that differs from a correct permanent configuration is reloaded
// too.
type Firewalld struct {
	// StatePath records the rich rules cargoship added, so one removed
	// from the document is removed from the host while the admin's own
	// rich rules are left alone. Defaults to RichRulesState.
	StatePath string
	// ConfigDir and DefaultsDir are firewalld's configuration and
	// built-in directories, FirewalldConfigDir and FirewalldDefaultsDir
	// unless a test points them elsewhere.
	ConfigDir, DefaultsDir string
	// ReplyWait bounds the wait for firewalld to answer again after
	// firewall-cmd lost a reply; DefaultReplyWait when zero.
	ReplyWait time.Duration

	// viaFirewallCmd reads through firewall-cmd even where the D-Bus
	// reader can run: the tests compare the two on a real firewalld.
	viaFirewallCmd bool

	// seenRunning is set by Choose from a detection that found firewalld
	// running: the next Apply trusts it instead of asking again.
	seenRunning *once
}

// once is a fact from a detection, good for one use.
type once struct{ used bool }

// take reports whether the fact is there and unused, and uses it.
func (o *once) take() bool {
	if o == nil || o.used {
		return false
	}
	o.used = true
	return true
}

// Name implements Firewall.
func (Firewalld) Name() string { return NameFirewalld }

// firewalldProbe prints "absent", or firewall-cmd --state's exit status
// and systemd's view of the unit, then what firewall-cmd printed. A unit
// systemd has inactive or failed, with no firewalld process, is answered
// as firewall-cmd answers for a daemon that is not running (252) without
// asking it: installed and stopped is the usual host, and each
// firewall-cmd is a Python start (docs/reference/hosts.md §5.1).
const firewalldProbe = `command -v firewall-cmd >/dev/null 2>&1 || { echo absent; exit 0; }
unit=$(systemctl is-active firewalld 2>/dev/null) || true
case $unit in inactive|failed)
  if command -v pgrep >/dev/null 2>&1 && ! pgrep -x firewalld >/dev/null 2>&1; then
    printf 'rc=252 unit=%s\nnot running\n' "$unit"; exit 0
  fi ;;
esac
out=$(firewall-cmd --state 2>&1) && rc=0 || rc=$?
printf 'rc=%s unit=%s\n%s\n' "$rc" "$unit" "$out"`

// Detect implements Firewall: firewall-cmd --state prints "running" and
// exits 0, or exits 252 (NOT_RUNNING). Any other failure while systemd
// says firewalld is active is an error, not "not running": a firewalld
// that runs but does not answer (its D-Bus replies denied by SELinux, say)
// would otherwise get an nftables table written beside it
// (docs/reference/hosts.md §5.1).
func (f Firewalld) Detect(ctx context.Context, r host.Runner) (bool, bool, error) {
	return detectOne(ctx, r, f)
}

func (Firewalld) detectScript() string { return firewalldProbe }

func (Firewalld) parseDetect(out string) (bool, bool, error) {
	head, rest, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if head == "absent" {
		return false, false, nil
	}
	var rc int
	var unit string
	if _, err := fmt.Sscanf(head+" ", "rc=%d unit=%s", &rc, &unit); err != nil {
		// unit= may be empty (no systemd): Sscanf stops at the rc
		if _, err := fmt.Sscanf(head, "rc=%d", &rc); err != nil {
			return false, false, fmt.Errorf("unexpected probe output %q", out)
		}
	}
	rest = strings.TrimSpace(rest)
	switch {
	case rc == 0 && rest == "running":
		return true, true, nil
	case rc == 252 || unit != "active":
		return true, false, nil
	}
	return true, false, fmt.Errorf("firewalld is active (systemd) but `firewall-cmd --state` failed (exit %d): %s; cargoship will not configure another firewall beside it: make firewall-cmd work (on an SELinux host, look for denied D-Bus replies from firewalld_t) or stop firewalld", rc, rest)
}

func (f Firewalld) statePath() string {
	return cmp.Or(f.StatePath, RichRulesState)
}

// ipsetWant is one of our ipsets and its desired entries.
type ipsetWant struct {
	name, typ string
	inet6     bool
	entries   []string
}

func firewalldSets(s spec) []ipsetWant {
	var n4, n6, s4, s6 []string
	for _, a := range s.nodes4 {
		n4 = append(n4, a.String())
	}
	for _, a := range s.nodes6 {
		n6 = append(n6, a.String())
	}
	for _, p := range s.nets4 {
		s4 = append(s4, p.String())
	}
	for _, p := range s.nets6 {
		s6 = append(s6, p.String())
	}
	return []ipsetWant{
		{IPSetNodes, "hash:ip", false, n4},
		{IPSetNodes6, "hash:ip", true, n6},
		{IPSetSubnets, "hash:net", false, s4},
		{IPSetSubnets6, "hash:net", true, s6},
	}
}

// richRule renders a rule in firewalld's canonical form (the order
// --list-rich-rules prints), so present rules compare equal as text.
func richRule(r rule) string {
	var b strings.Builder
	b.WriteString("rule")
	if r.source.IsValid() {
		fam := "ipv4"
		if r.source.Addr().Is6() {
			fam = "ipv6"
		}
		fmt.Fprintf(&b, ` family="%s" source address="%s"`, fam, sourceString(r.source))
	}
	if r.port != nil {
		fmt.Fprintf(&b, ` port port="%s" protocol="%s"`, r.port, r.port.proto)
	}
	b.WriteString(" " + r.action)
	return b.String()
}

// fwState is firewalld's configuration as far as cargoship cares.
type fwState struct {
	ipsets       map[string]bool
	entries      map[string][]string
	trusted      []string
	services     map[string]bool
	ports        []string
	zoneServices []string
	rich         []string
}

// firewalldRead prints firewalld's configuration in sections. $1 is
// "permanent" or "runtime", the rest our ipset names. Every zone comes
// from one --list-all-zones, and the service from one --info-service,
// which exits 101 (INVALID_SERVICE) when there is none: each firewall-cmd
// is a Python start, and a plan read took 15 of them before.
const firewalldRead = `p=; [ "$1" = permanent ] && p=--permanent
shift
sets=$(firewall-cmd $p --get-ipsets)
echo "@@ipsets"; echo "$sets"
for s in "$@"; do
  case " $sets " in *" $s "*) echo "@@entries $s"; firewall-cmd $p --ipset="$s" --get-entries;; esac
done
echo "@@zones"; firewall-cmd $p --list-all-zones
if [ -n "$p" ]; then
  rc=0; svc=$(firewall-cmd --permanent --info-service=` + FirewalldServ + ` 2>&1) || rc=$?
  case $rc in
  0) echo "@@service"; echo "$svc" ;;
  101) ;;
  *) echo "$svc" >&2; exit "$rc" ;;
  esac
fi`

// parseFWState reads firewalldRead's sections; zone is the zone the plan
// manages.
func parseFWState(out, zone string) fwState {
	st := fwState{ipsets: map[string]bool{}, entries: map[string][]string{}, services: map[string]bool{}}
	for _, sec := range splitSections(out) {
		switch sec.name {
		case "ipsets":
			addAll(st.ipsets, sec.words())
		case "entries":
			st.entries[sec.arg] = append(st.entries[sec.arg], sec.words()...)
		case "zones":
			_, zones := parseZoneListing(strings.Join(sec.lines, "\n"))
			st.trusted = zones[TrustedZone].sources
			st.zoneServices = zones[zone].services
			st.rich = zones[zone].rich
		case "service":
			st.services[FirewalldServ] = true
			st.ports = parseServicePorts(strings.Join(sec.lines, "\n"))
		}
	}
	return st
}

// firewalldPlanRead prints, in one round trip, what a plan needs: the
// zone of the private interface $2 (or the default zone), the permanent
// and the runtime configuration in it, and the rich-rule record $3 with
// its size ("-" when there is none); the rest are our ipset names. $1 is
// the D-Bus reader, which answers all of it but the record in one Python
// start; without it, firewall-cmd is asked.
const firewalldPlanRead = `set -e
prog=$1 iface=$2 record=$3; shift 3
` + firewalldDBusTry + `if fwdbus "$prog" "$iface" ` + FirewalldServ + ` "$@"; then :; else
rc=$?; [ "$rc" = 3 ] || exit "$rc"
z=
if [ -n "$iface" ]; then z=$(firewall-cmd --get-zone-of-interface="$iface" 2>/dev/null) || z=; fi
[ "$z" = "no zone" ] && z=
[ -n "$z" ] || z=$(firewall-cmd --get-default-zone)
echo "@@zone $z"
echo "@@part permanent"
(set -- permanent "$@"
` + firewalldRead + `)
echo "@@part runtime"
(set -- runtime "$@"
` + firewalldRead + `)
fi
if [ -e "$record" ]; then echo "@@record $(wc -c < "$record")"; cat -- "$record"; else echo "@@record -"; fi`

// fwPlanState is what firewalldPlanRead read.
type fwPlanState struct {
	zone      string
	perm, run fwState
	recorded  []byte
}

func readFirewalldPlan(ctx context.Context, r host.Runner, f Firewalld, iface, record string) (fwPlanState, error) {
	out, err := r.Sudo(ctx, host.Script(firewalldPlanRead, dbusProgram(f), iface, record, IPSetNodes, IPSetNodes6, IPSetSubnets, IPSetSubnets6))
	if err != nil {
		return fwPlanState{}, fmt.Errorf("reading the firewalld configuration: %w", err)
	}
	st, err := parseFirewalldPlan(out)
	if err != nil {
		return st, fmt.Errorf("reading the firewalld configuration: %w", err)
	}
	return st, nil
}

// parseFirewalldPlan splits firewalldPlanRead's output at its markers;
// the record is taken byte for byte, by its size.
func parseFirewalldPlan(out string) (fwPlanState, error) {
	var st fwPlanState
	read, rec, ok := strings.Cut(out, "\n@@record ")
	size, body, ok2 := strings.Cut(rec, "\n")
	if !ok || !ok2 && size != "-" {
		return st, fmt.Errorf("unexpected output %q", out)
	}
	var err error
	if payload, ok := dbusPayload(read); ok {
		var d fwDBusRead
		if d, err = parseDBusRead(payload); err != nil {
			return st, err
		}
		st.zone, st.perm, st.run = d.Zone, d.Permanent.state(d.Zone), d.Runtime.state(d.Zone)
	} else if st, err = parseFirewallCmdPlan(read); err != nil {
		return st, err
	}
	if size = strings.TrimSpace(size); size == "-" {
		return st, nil
	}
	n, err := strconv.Atoi(size)
	if err != nil || n < 0 || n > len(body) {
		return st, fmt.Errorf("the rich-rule record's size %q does not match the %d bytes read", size, len(body))
	}
	st.recorded = []byte(body[:n])
	return st, nil
}

// parseFirewallCmdPlan reads what firewall-cmd printed for a plan: the
// zone, then the permanent and the runtime configuration.
func parseFirewallCmdPlan(out string) (fwPlanState, error) {
	var st fwPlanState
	zoneLine, rest, ok := strings.Cut(out, "\n")
	zone, found := strings.CutPrefix(zoneLine, "@@zone ")
	if !ok || !found || zone == "" || strings.ContainsAny(zone, " \t") {
		return st, fmt.Errorf("no zone found: firewall-cmd printed %q", zoneLine)
	}
	st.zone = zone
	perm, run, ok1 := strings.Cut(rest, "@@part runtime\n")
	perm, ok2 := strings.CutPrefix(perm, "@@part permanent\n")
	if !ok1 || !ok2 {
		return st, fmt.Errorf("unexpected output %q", out)
	}
	st.perm, st.run = parseFWState(perm, zone), parseFWState(run, zone)
	return st, nil
}

func (f Firewalld) plan(ctx context.Context, r host.Runner, d Desired) (Plan, []string, error) {
	var p Plan
	s, err := normalize(d)
	if err != nil {
		return p, nil, err
	}
	read, err := readFirewalldPlan(ctx, r, f, s.iface, f.statePath())
	if err != nil {
		return p, nil, err
	}
	zone, perm, recorded := read.zone, read.perm, read.recorded
	wantRich := make([]string, len(s.rules))
	for i, ru := range s.rules {
		wantRich[i] = richRule(ru)
	}
	state := make([]string, len(wantRich))
	for i, rr := range wantRich {
		state[i] = zone + "\t" + rr
	}
	fw := func(summary string, args ...string) {
		p.addFW(summary, append([]string{"--permanent"}, args...)...)
	}

	var trust []string
	for _, set := range firewalldSets(s) {
		have := perm.entries[set.name]
		if !perm.ipsets[set.name] {
			if len(set.entries) == 0 {
				continue
			}
			args := []string{"--new-ipset=" + set.name, "--type=" + set.typ}
			if set.inet6 {
				args = append(args, "--family=inet6")
			}
			fw("create ipset "+set.name, args...)
		}
		for _, e := range set.entries {
			if !slices.Contains(have, e) {
				fw(fmt.Sprintf("add %s to ipset %s", e, set.name), "--ipset="+set.name, "--add-entry="+e)
			}
		}
		for _, e := range have {
			if !slices.Contains(set.entries, e) {
				fw(fmt.Sprintf("remove %s from ipset %s", e, set.name), "--ipset="+set.name, "--remove-entry="+e)
			}
		}
		if src := "ipset:" + set.name; !slices.Contains(perm.trusted, src) {
			trust = append(trust, set.name)
		}
	}
	// After every ipset, so the sources join into one call.
	for _, name := range trust {
		fw(fmt.Sprintf("trust ipset %s in zone %s", name, TrustedZone), "--zone="+TrustedZone, "--add-source=ipset:"+name)
	}

	wantPorts := make([]string, len(s.ports))
	for i, pr := range s.ports {
		wantPorts[i] = pr.String() + "/" + pr.proto
	}
	if !perm.services[FirewalldServ] && len(wantPorts) > 0 {
		fw("create service "+FirewalldServ, "--new-service="+FirewalldServ)
	}
	if perm.services[FirewalldServ] || len(wantPorts) > 0 {
		for _, port := range wantPorts {
			if !slices.Contains(perm.ports, port) {
				fw(fmt.Sprintf("open %s in service %s", port, FirewalldServ), "--service="+FirewalldServ, "--add-port="+port)
			}
		}
		for _, port := range perm.ports {
			if !slices.Contains(wantPorts, port) {
				fw(fmt.Sprintf("close %s in service %s", port, FirewalldServ), "--service="+FirewalldServ, "--remove-port="+port)
			}
		}
		if !slices.Contains(perm.zoneServices, FirewalldServ) {
			fw(fmt.Sprintf("enable service %s in zone %s", FirewalldServ, zone), "--zone="+zone, "--add-service="+FirewalldServ)
		}
	}

	for _, line := range strings.Split(string(recorded), "\n") {
		z, rr, ok := strings.Cut(line, "\t")
		if !ok || slices.Contains(state, line) || z == zone && !slices.Contains(perm.rich, rr) {
			continue
		}
		fw(fmt.Sprintf("remove rich rule %s from zone %s", rr, z), "--zone="+z, "--remove-rich-rule="+rr)
	}
	for _, rr := range wantRich {
		if !slices.Contains(perm.rich, rr) {
			fw(fmt.Sprintf("add rich rule %s to zone %s", rr, zone), "--zone="+zone, "--add-rich-rule="+rr)
		}
	}

	if p.Changed() {
		p.addFW("make the permanent configuration live", "--reload")
	} else {
		if drift := runtimeDrift(perm, read.run); drift != "" {
			p.addFW("reload: the runtime configuration differs from the permanent one ("+drift+")", "--reload")
		}
	}
	if string(recorded) != strings.Join(state, "\n")+"\n" && (len(state) > 0 || len(recorded) > 0) {
		p.add("record the rich rules cargoship manages in "+f.statePath(), "")
	}
	return p, state, nil
}

// runtimeDrift compares what cargoship manages in the two configurations.
func runtimeDrift(perm, run fwState) string {
	for _, set := range []string{IPSetNodes, IPSetNodes6, IPSetSubnets, IPSetSubnets6} {
		if perm.ipsets[set] != run.ipsets[set] || !sameSet(perm.entries[set], run.entries[set]) {
			return "ipset " + set
		}
	}
	switch {
	case !sameSet(perm.trusted, run.trusted):
		return "trusted sources"
	case !sameSet(perm.zoneServices, run.zoneServices):
		return "zone services"
	case !sameSet(perm.rich, run.rich):
		return "rich rules"
	}
	return ""
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

// Plan implements Firewall.
func (f Firewalld) Plan(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	p, _, err := f.plan(ctx, r, d)
	return p, err
}

// Apply implements Firewall. firewalld must be running: firewall-cmd
// talks to the daemon.
func (f Firewalld) Apply(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	if !f.seenRunning.take() {
		if _, active, err := f.Detect(ctx, r); err != nil || !active {
			if err == nil {
				err = fmt.Errorf("firewalld is not running")
			}
			return Plan{}, err
		}
	}
	p, state, err := f.plan(ctx, r, d)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := f.converge(ctx, r, &p, func() (Plan, error) { p, _, err := f.plan(ctx, r, d); return p, err }); err != nil {
		return Plan{}, fmt.Errorf("configuring firewalld: %w", err)
	}
	body := ""
	if len(state) > 0 {
		body = strings.Join(state, "\n") + "\n"
	}
	if _, err := host.WriteFile(ctx, r, f.statePath(), []byte(body), 0o644, ""); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// ourIPSets are the ipsets Apply creates; ourNodeSets those holding peers.
var (
	ourIPSets   = []string{IPSetNodes, IPSetNodes6, IPSetSubnets, IPSetSubnets6}
	ourNodeSets = []string{IPSetNodes, IPSetNodes6}
)

// firewalldOwnRead prints what firewalld holds of cargoship's, in
// sections. $1 is "permanent" or "runtime"; $2 "sets" (the ipsets and
// their entries only) or "all" (also the services and every zone, from one
// --list-all-zones rather than three firewall-cmd runs a zone); then the
// ipset names, then --, then the zones whose rich rules are kept.
const firewalldOwnRead = `p=; [ "$1" = permanent ] && p=--permanent
what=$2; shift 2
sets=$(firewall-cmd $p --get-ipsets)
echo "@@ipsets"; echo "$sets"
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case " $sets " in *" $1 "*) echo "@@entries $1"; firewall-cmd $p --ipset="$1" --get-entries;; esac
  shift
done
[ $# -gt 0 ] && shift
[ "$what" = all ] || exit 0
if [ -n "$p" ]; then echo "@@services"; firewall-cmd --permanent --get-services; fi
echo "@@zones"; firewall-cmd $p --list-all-zones`

// firewalldOwnReadScript asks the D-Bus reader ($1) first, and
// firewalldOwnRead, with the rest of the arguments, when it cannot run.
var firewalldOwnReadScript = "set -e\nprog=$1; shift\n" + firewalldDBusTry +
	`if fwdbus "$prog" "" ` + FirewalldServ + " " + strings.Join(ourIPSets, " ") + `; then exit 0; else rc=$?; fi
[ "$rc" = 3 ] || exit "$rc"
` + firewalldOwnRead

// fwOwn is what firewalld holds of cargoship's.
type fwOwn struct {
	ipsets   map[string]bool
	entries  map[string][]string
	services map[string]bool
	zones    []string
	// per zone
	sources, zoneServices, rich map[string][]string
}

func newFWOwn() fwOwn {
	return fwOwn{ipsets: map[string]bool{}, entries: map[string][]string{}, services: map[string]bool{},
		sources: map[string][]string{}, zoneServices: map[string][]string{}, rich: map[string][]string{}}
}

func readFirewalldOwn(ctx context.Context, r host.Runner, f Firewalld, permanent, all bool, richZones []string) (fwOwn, error) {
	mode, what := "runtime", "sets"
	if permanent {
		mode = "permanent"
	}
	if all {
		what = "all"
	}
	args := append(append(append([]string{dbusProgram(f), mode, what}, ourIPSets...), "--"), richZones...)
	out, err := r.Sudo(ctx, host.Script(firewalldOwnReadScript, args...))
	if err != nil {
		return fwOwn{}, fmt.Errorf("reading the %s firewalld configuration: %w", mode, err)
	}
	if payload, ok := dbusPayload(out); ok {
		d, err := parseDBusRead(payload)
		if err != nil {
			return fwOwn{}, fmt.Errorf("reading the %s firewalld configuration: %w", mode, err)
		}
		c := d.Runtime
		if permanent {
			c = d.Permanent
		}
		return c.own(all, richZones), nil
	}
	st := newFWOwn()
	for _, sec := range splitSections(out) {
		switch sec.name {
		case "ipsets":
			addAll(st.ipsets, sec.words())
		case "entries":
			st.entries[sec.arg] = append(st.entries[sec.arg], sec.words()...)
		case "services":
			addAll(st.services, sec.words())
		case "zones":
			names, zones := parseZoneListing(strings.Join(sec.lines, "\n"))
			st.zones = names
			for _, z := range names {
				st.sources[z], st.zoneServices[z] = zones[z].sources, zones[z].services
				if slices.Contains(richZones, z) {
					st.rich[z] = zones[z].rich
				}
			}
		}
	}
	return st, nil
}

// running reports whether there is a firewalld to ask: none installed is
// nothing to do, one stopped is a warning (firewall-cmd needs the daemon,
// and cargoship does not start it).
func (f Firewalld) running(ctx context.Context, r host.Runner, p *Plan) (bool, error) {
	present, active, err := f.Detect(ctx, r)
	if err != nil || !present {
		return false, err
	}
	if !active {
		p.warnf("firewalld is not running: cargoship's configuration in it was not read and is left as it is")
	}
	return active, nil
}

func (f Firewalld) forgetPlan(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	var p Plan
	gone, err := parsePeers(addrs)
	if err != nil || len(gone) == 0 {
		return p, err
	}
	if ok, err := f.running(ctx, r, &p); err != nil || !ok {
		return p, err
	}
	perm, err := readFirewalldOwn(ctx, r, f, true, false, nil)
	if err != nil {
		return p, err
	}
	fw := func(summary string, args ...string) {
		p.addFW(summary, append([]string{"--permanent"}, args...)...)
	}
	for _, set := range ourNodeSets {
		for _, e := range perm.entries[set] {
			if isPeer(e, gone) {
				fw(fmt.Sprintf("remove %s from ipset %s", e, set), "--ipset="+set, "--remove-entry="+e)
			}
		}
	}
	if p.Changed() {
		p.addFW("make the permanent configuration live", "--reload")
		return p, nil
	}
	run, err := readFirewalldOwn(ctx, r, f, false, false, nil)
	if err != nil {
		return p, err
	}
	for _, set := range ourNodeSets {
		for _, e := range run.entries[set] {
			if isPeer(e, gone) {
				p.addFW(fmt.Sprintf("reload: the runtime configuration still trusts %s", e), "--reload")
				return p, nil
			}
		}
	}
	return p, nil
}

// PlanForget implements Firewall.
func (f Firewalld) PlanForget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	return f.forgetPlan(ctx, r, addrs)
}

// Forget implements Firewall: the addresses leave the peer ipsets
// (k8s-nodes, k8s-nodes6), permanently and then live with one --reload,
// as Apply removes a peer; the ipsets stay, empty or not, as Apply leaves
// them.
func (f Firewalld) Forget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	p, err := f.forgetPlan(ctx, r, addrs)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := f.converge(ctx, r, &p, func() (Plan, error) { return f.forgetPlan(ctx, r, addrs) }); err != nil {
		return Plan{}, fmt.Errorf("configuring firewalld: %w", err)
	}
	return p, nil
}

// holdsOurs reports whether a configuration still holds an ipset, source
// or service binding of cargoship's.
func holdsOurs(st fwOwn) string {
	for _, set := range ourIPSets {
		if st.ipsets[set] {
			return "ipset " + set
		}
	}
	for _, z := range st.zones {
		for _, s := range st.sources[z] {
			if name, ok := strings.CutPrefix(s, "ipset:"); ok && slices.Contains(ourIPSets, name) {
				return "source " + s + " in zone " + z
			}
		}
		if slices.Contains(st.zoneServices[z], FirewalldServ) {
			return "service " + FirewalldServ + " in zone " + z
		}
	}
	return ""
}

func (f Firewalld) removePlan(ctx context.Context, r host.Runner) (Plan, []string, bool, error) {
	var p Plan
	if ok, err := f.running(ctx, r, &p); err != nil || !ok {
		return p, nil, false, err
	}
	recorded, stateExists, err := host.ReadFileIfExists(ctx, r, f.statePath())
	if err != nil {
		return p, nil, false, err
	}
	type richLine struct{ zone, rule string }
	var rich []richLine
	var richZones []string
	for _, line := range strings.Split(string(recorded), "\n") {
		if z, rr, ok := strings.Cut(line, "\t"); ok {
			rich = append(rich, richLine{z, rr})
			if !slices.Contains(richZones, z) {
				richZones = append(richZones, z)
			}
		}
	}
	perm, err := readFirewalldOwn(ctx, r, f, true, true, richZones)
	if err != nil {
		return p, nil, false, err
	}
	fw := func(summary string, args ...string) {
		p.addFW(summary, append([]string{"--permanent"}, args...)...)
	}
	// Every zone's references go with what they name: a zone naming a
	// deleted ipset or service fails the next reload, and --delete-* does
	// not look (docs/reference/hosts.md §5.1).
	var touched []string
	touch := func(z string) {
		if !slices.Contains(touched, z) {
			touched = append(touched, z)
		}
	}
	for _, z := range perm.zones {
		for _, s := range perm.sources[z] {
			if name, ok := strings.CutPrefix(s, "ipset:"); ok && slices.Contains(ourIPSets, name) {
				fw(fmt.Sprintf("stop trusting ipset %s in zone %s", name, z), "--zone="+z, "--remove-source="+s)
				touch(z)
			}
		}
		if slices.Contains(perm.zoneServices[z], FirewalldServ) {
			fw(fmt.Sprintf("disable service %s in zone %s", FirewalldServ, z), "--zone="+z, "--remove-service="+FirewalldServ)
			touch(z)
		}
	}
	for _, rl := range rich {
		if slices.Contains(perm.rich[rl.zone], rl.rule) {
			fw(fmt.Sprintf("remove rich rule %s from zone %s", rl.rule, rl.zone), "--zone="+rl.zone, "--remove-rich-rule="+rl.rule)
			touch(rl.zone)
		}
	}
	for _, set := range ourIPSets {
		if perm.ipsets[set] {
			fw("delete ipset "+set, "--delete-ipset="+set)
		}
	}
	if perm.services[FirewalldServ] {
		fw("delete service "+FirewalldServ+" and the ports it opens", "--delete-service="+FirewalldServ)
	}
	if p.Changed() {
		p.addFW("make the permanent configuration live", "--reload")
	} else {
		run, err := readFirewalldOwn(ctx, r, f, false, true, nil)
		if err != nil {
			return p, nil, false, err
		}
		if what := holdsOurs(run); what != "" {
			p.addFW("reload: the runtime configuration still holds "+what, "--reload")
		}
	}
	if stateExists {
		p.add("remove "+f.statePath(), "")
	}
	return p, touched, stateExists, nil
}

// PlanRemove implements Firewall.
func (f Firewalld) PlanRemove(ctx context.Context, r host.Runner) (Plan, error) {
	p, touched, _, err := f.removePlan(ctx, r)
	for _, z := range touched {
		p.add("restore zone "+z+" to its built-in defaults if nothing but cargoship's changes set it apart", "")
	}
	return p, err
}

// Remove implements Firewall. What is cargoship's: the ipsets k8s-nodes,
// k8s-nodes6, k8s-subnets, k8s-subnets6 and every zone source naming them,
// the service "cargoship" (with the ports it opens) and every zone it is
// enabled in, and the rich rules recorded in StatePath. Ports, services,
// sources and rich rules an admin added are left alone, and so is the
// zone of each interface. One --reload makes it live; then tidy puts
// back what firewalld's bookkeeping of cargoship's changes left.
func (f Firewalld) Remove(ctx context.Context, r host.Runner) (Plan, error) {
	p, touched, stateExists, err := f.removePlan(ctx, r)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := f.converge(ctx, r, &p, func() (Plan, error) { p, _, _, err := f.removePlan(ctx, r); return p, err }); err != nil {
		return Plan{}, fmt.Errorf("configuring firewalld: %w", err)
	}
	tidied, err := f.tidy(ctx, r, touched)
	if err != nil {
		return Plan{}, fmt.Errorf("tidying firewalld's files: %w", err)
	}
	p.Actions = append(p.Actions, tidied.Actions...)
	if stateExists {
		if _, err := hostos.RemoveFile(ctx, r, f.statePath()); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}
