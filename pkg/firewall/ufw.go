package firewall

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// ufwTag starts the comment of every rule cargoship adds, so its rules can
// be found, compared and removed while the admin's are left alone.
const ufwTag = "cargoship"

// UFW configures ufw, and only an active one: cargoship never runs ufw enable,
// which flushes the chains and can cut the SSH connection
// (docs/reference/hosts.md §5.2). Peers and cluster networks are allowed from,
// ports are allowed to; drop and reject rules are prepended so they come
// before the allows (ufw takes the first matching rule).
type UFW struct {
	// primed is what DetectAll read with an active ufw's detection: the
	// next Plan or Apply uses it instead of asking again.
	primed *ufwPrimed
	// separateRuns runs ufw once per change even where one Python process
	// can make them all: the tests compare the two on a real ufw.
	separateRuns bool
}

// ufwPrimed holds `ufw show added` as DetectAll read it, for one use:
// after a change it is stale.
type ufwPrimed struct {
	added string
	used  bool
}

// take returns the primed rules once; later calls report none.
func (u UFW) take() (string, bool) {
	if u.primed == nil || u.primed.used {
		return "", false
	}
	u.primed.used = true
	return u.primed.added, true
}

// ufwAddedMark separates an active ufw's status line from its rules in
// the detection's output.
const ufwAddedMark = "@@cargoship-ufw-added"

// primeUFW keeps the rules an active ufw's detection printed.
func primeUFW(probe string) UFW {
	_, added, ok := strings.Cut(probe, ufwAddedMark+"\n")
	if !ok || !strings.HasPrefix(added, "Added user rules") {
		return UFW{} // show added failed: Plan reads again, and says why
	}
	return UFW{primed: &ufwPrimed{added: added}}
}

// Name implements Firewall.
func (UFW) Name() string { return NameUFW }

// Detect implements Firewall. ufw's messages are translated: LC_ALL=C.
func (u UFW) Detect(ctx context.Context, r host.Runner) (bool, bool, error) {
	return detectOne(ctx, r, u)
}

// detectScript prints ufw's status line and, when it is active, the
// rules it holds, so that a converged host is asked once. ufw is active
// when its chain ufw-user-input exists; one disabled in ufw.conf whose
// chain iptables does not know (exit 1) is inactive without a Python start
// (docs/reference/hosts.md §5.2).
func (UFW) detectScript() string {
	return `command -v ufw >/dev/null 2>&1 || { echo absent; exit 0; }
if grep -qsx 'ENABLED=no' /etc/ufw/ufw.conf && command -v iptables >/dev/null 2>&1; then
  rc=0; iptables -w -n -L ufw-user-input >/dev/null 2>&1 || rc=$?
  if [ "$rc" = 1 ]; then echo 'Status: inactive'; exit 0; fi
fi
s=$(LC_ALL=C ufw status 2>/dev/null | head -n 1) || true
printf '%s\n' "$s"
if [ "$s" = "Status: active" ]; then echo '` + ufwAddedMark + `'; LC_ALL=C ufw show added; fi`
}

func (UFW) parseDetect(out string) (bool, bool, error) {
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	first = strings.TrimSpace(first)
	return first != "absent", first == "Status: active", nil
}

// ufwRule is a rule as ufw compares them: action, source, port and
// protocol ("any" for none), plus the comment it carries.
type ufwRule struct {
	action, from, port, proto string
	comment                   string
}

func (u ufwRule) key() string { return u.action + " " + u.from + " " + u.port + " " + u.proto }

// args renders the rule for `ufw allow|deny|reject ...`.
func (u ufwRule) args() []string {
	a := []string{u.action}
	switch {
	case u.from == "any":
		a = append(a, u.port+"/"+u.proto)
	case u.port == "any":
		a = append(a, "from", u.from)
	default:
		if u.proto != "any" {
			a = append(a, "proto", u.proto)
		}
		a = append(a, "from", u.from, "to", "any", "port", u.port)
	}
	return a
}

func ufwAction(a string) string {
	switch a {
	case "drop":
		return "deny"
	case "reject":
		return "reject"
	}
	return "allow"
}

// ufwPort is ufw's spelling of a port range: 30000:32767.
func ufwPort(p portRange) string { return strings.ReplaceAll(p.String(), "-", ":") }

func ufwRules(s spec) []ufwRule {
	var out []ufwRule
	for _, a := range append(append([]netip.Addr{}, s.nodes4...), s.nodes6...) {
		out = append(out, ufwRule{"allow", a.String(), "any", "any", ufwTag + " peer"})
	}
	for _, p := range append(append([]netip.Prefix{}, s.nets4...), s.nets6...) {
		out = append(out, ufwRule{"allow", p.String(), "any", "any", ufwTag + " network"})
	}
	for _, p := range s.ports {
		out = append(out, ufwRule{"allow", "any", ufwPort(p), p.proto, ufwTag + " port"})
	}
	for _, r := range s.rules {
		u := ufwRule{action: ufwAction(r.action), from: "any", port: "any", proto: "any", comment: ufwTag + " rule " + r.name}
		if r.source.IsValid() {
			u.from = sourceString(r.source)
		}
		if r.port != nil {
			u.port, u.proto = ufwPort(*r.port), r.port.proto
		}
		out = append(out, u)
	}
	return out
}

// parseUFWAdded reads `ufw show added`: one "ufw ACTION ..." command per
// rule, comments in single quotes. Route, outgoing and app rules are not
// cargoship's and are skipped.
func parseUFWAdded(out string) []ufwRule {
	var rules []ufwRule
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "ufw ")
		if !ok {
			continue
		}
		comment := ""
		if i := strings.Index(rest, " comment "); i >= 0 {
			comment = strings.Trim(strings.TrimSpace(rest[i+len(" comment "):]), "'")
			rest = rest[:i]
		}
		w := strings.Fields(rest)
		if len(w) < 2 || (w[0] != "allow" && w[0] != "deny" && w[0] != "reject" && w[0] != "limit") {
			continue
		}
		u := ufwRule{action: w[0], from: "any", port: "any", proto: "any", comment: comment}
		skip := false
		for i := 1; i < len(w); i++ {
			next := func() string {
				if i+1 < len(w) {
					i++
					return w[i]
				}
				return ""
			}
			switch w[i] {
			case "in":
			case "out", "on", "app", "log", "log-all":
				skip = true
			case "proto":
				u.proto = next()
			case "from":
				u.from = next()
				if i+1 < len(w) && w[i+1] == "port" {
					skip = true // source ports: not cargoship's
				}
			case "to":
				if to := next(); to != "any" {
					skip = true
				}
			case "port":
				u.port = next()
			default:
				if i == 1 { // simple form: PORT[/PROTO]
					port, proto, found := strings.Cut(w[i], "/")
					u.port = port
					if found {
						u.proto = proto
					}
					continue
				}
				skip = true
			}
		}
		if !skip {
			rules = append(rules, u)
		}
	}
	return rules
}

// added is `ufw show added`: the primed copy once, else read from r.
func (u UFW) added(ctx context.Context, r host.Runner) (string, error) {
	if out, ok := u.take(); ok {
		return out, nil
	}
	out, err := r.Sudo(ctx, "LC_ALL=C ufw show added")
	if err != nil {
		return "", fmt.Errorf("reading ufw rules: %w", err)
	}
	return out, nil
}

func (u UFW) plan(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	var p Plan
	s, err := normalize(d)
	if err != nil {
		return p, err
	}
	out, err := u.added(ctx, r)
	if err != nil {
		return p, err
	}
	have := map[string]ufwRule{}
	for _, u := range parseUFWAdded(out) {
		have[u.key()] = u
	}
	want := ufwRules(s)
	wanted := map[string]bool{}
	var prepend []ufwRule
	for _, u := range want {
		wanted[u.key()] = true
		if _, ok := have[u.key()]; ok {
			continue
		}
		if u.action != "allow" {
			prepend = append(prepend, u)
			continue
		}
		p.addArgv("ufw "+strings.Join(u.args(), " "), append(append([]string{"ufw"}, u.args()...), "comment", u.comment)...)
	}
	// Prepended last and in reverse, so they end up in document order at
	// the top.
	for i := len(prepend) - 1; i >= 0; i-- {
		u := prepend[i]
		p.addArgv("ufw prepend "+strings.Join(u.args(), " "), append(append([]string{"ufw", "prepend"}, u.args()...), "comment", u.comment)...)
	}
	for _, u := range parseUFWAdded(out) {
		if strings.HasPrefix(u.comment, ufwTag) && !wanted[u.key()] {
			p.addArgv("ufw delete "+strings.Join(u.args(), " "), append([]string{"ufw", "delete"}, u.args()...)...)
		}
	}
	return p, nil
}

// Plan implements Firewall.
func (u UFW) Plan(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	return u.plan(ctx, r, d)
}

// Apply implements Firewall. ufw applies each rule as it is added; there
// is nothing to reload.
func (u UFW) Apply(ctx context.Context, r host.Runner, d Desired) (Plan, error) {
	// primed rules come from a detection that found ufw active
	if u.primed == nil || u.primed.used {
		_, active, err := u.Detect(ctx, r)
		if err != nil {
			return Plan{}, err
		}
		if !active {
			return Plan{}, fmt.Errorf("ufw is not active; cargoship never enables it (that can cut the SSH connection)")
		}
	}
	p, err := u.plan(ctx, r, d)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := runToolCalls(ctx, r, argvs(p), u.separateRuns); err != nil {
		return Plan{}, fmt.Errorf("configuring ufw: %w", err)
	}
	return p, nil
}

// forgetPlan deletes the rules Apply adds for addrs as peers: allow from
// the address to any port, carrying cargoship's tag, the rules Apply would
// delete once the addresses leave Desired.Peers.
func (u UFW) forgetPlan(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	var p Plan
	gone, err := parsePeers(addrs)
	if err != nil || len(gone) == 0 {
		return p, err
	}
	present, _, err := u.Detect(ctx, r)
	if err != nil || !present {
		return p, err
	}
	out, err := r.Sudo(ctx, "LC_ALL=C ufw show added")
	if err != nil {
		return p, fmt.Errorf("reading ufw rules: %w", err)
	}
	for _, rule := range parseUFWAdded(out) {
		if strings.HasPrefix(rule.comment, ufwTag) && rule.action == "allow" && rule.port == "any" && rule.proto == "any" && isPeer(rule.from, gone) {
			p.addArgv("ufw delete "+strings.Join(rule.args(), " "), append([]string{"ufw", "delete"}, rule.args()...)...)
		}
	}
	return p, nil
}

// PlanForget implements Firewall.
func (u UFW) PlanForget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	return u.forgetPlan(ctx, r, addrs)
}

// Forget implements Firewall. Unlike Apply it works on an inactive ufw
// too: a rule deleted there only leaves ufw's rules files, and nothing is
// enabled (docs/reference/hosts.md §5.2).
func (u UFW) Forget(ctx context.Context, r host.Runner, addrs []string) (Plan, error) {
	p, err := u.forgetPlan(ctx, r, addrs)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := runToolCalls(ctx, r, argvs(p), u.separateRuns); err != nil {
		return Plan{}, fmt.Errorf("configuring ufw: %w", err)
	}
	return p, nil
}

// removePlan deletes every rule carrying cargoship's tag, which is what
// Apply with an empty Desired deletes; the admin's rules carry no tag.
func (u UFW) removePlan(ctx context.Context, r host.Runner) (Plan, error) {
	present, _, err := u.Detect(ctx, r)
	if err != nil || !present {
		return Plan{}, err
	}
	return u.plan(ctx, r, Desired{})
}

// PlanRemove implements Firewall.
func (u UFW) PlanRemove(ctx context.Context, r host.Runner) (Plan, error) {
	return u.removePlan(ctx, r)
}

// Remove implements Firewall. Like Forget it works on an inactive ufw and
// never enables or disables it.
func (u UFW) Remove(ctx context.Context, r host.Runner) (Plan, error) {
	p, err := u.removePlan(ctx, r)
	if err != nil || !p.Changed() {
		return p, err
	}
	if err := runToolCalls(ctx, r, argvs(p), u.separateRuns); err != nil {
		return Plan{}, fmt.Errorf("configuring ufw: %w", err)
	}
	return p, nil
}
