package v1alpha1

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The static HA check (docs/validate.md, "HA checks"): what the inventory,
// and the distro it is applied with, must say for several controllers to
// be one control plane that survives losing any one of them. Each rule is
// an entry of haRules, so a test can run the list with one left out and
// see the case it exists for pass.
type haRule struct {
	name string
	// inventory runs on the inventory alone (ParseCluster).
	inventory func(*haInput)
	// distro runs with the definition (ParseClusterWithDistro).
	distro func(*haInput)
}

var haRules = []haRule{
	{name: "odd-controllers", inventory: ruleOddControllers},
	{name: "api-address", inventory: ruleAPIAddress},
	{name: "vip-subnet", inventory: ruleVIPSubnet},
	{name: "vip-collision", inventory: ruleVIPCollision},
	{name: "founder", distro: ruleFounder},
	{name: "datastore", distro: ruleDatastore},
	{name: "vip-networks", distro: ruleVIPNetworks},
	{name: "vip-pools", distro: ruleVIPPools},
	{name: "cni-endpoint", distro: ruleCNIEndpoint},
}

// haInput is what a rule reads and where it reports.
type haInput struct {
	d           *document // the inventory
	c           *Cluster
	controllers []int      // indexes of controller-type hosts, in inventory order
	vip         netip.Addr // the VIP's address; invalid when there is none or it does not parse
	// With a distro only:
	ds   *Distro
	dd   *document // the definition, located when its source is known
	with string    // "with distro.yaml (spec.type k3s)", naming the definition
}

func newHAInput(d *document, c *Cluster) *haInput {
	x := &haInput{d: d, c: c}
	for i := range c.Spec.Hosts {
		if c.Spec.Hosts[i].IsController() {
			x.controllers = append(x.controllers, i)
		}
	}
	if v := c.Spec.Config.VIP; v != nil && CheckVIPAddress(v.Address) == nil {
		x.vip, _ = netip.ParseAddr(v.IP())
	}
	return x
}

// ha reports whether the inventory claims a fault-tolerant control plane.
func (x *haInput) ha() bool { return len(x.controllers) > 1 }

func (x *haInput) host(i int) *Host { return &x.c.Spec.Hosts[i] }

// names lists hosts as messages name them.
func (x *haInput) names(idx []int) string {
	out := make([]string, len(idx))
	for j, i := range idx {
		out[j] = x.host(i).Name()
	}
	return strings.Join(out, ", ")
}

// report records a finding in doc; with a distro, the message names the
// other document.
func (x *haInput) report(sev Severity, doc *document, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	switch {
	case x.ds != nil && doc == x.dd:
		msg = "with " + x.d.file + ": " + msg
	case x.ds != nil:
		msg = x.with + ": " + msg
	}
	doc.add(sev, path, "%s", msg)
}

// runHA runs the inventory half of rules.
func runHA(d *document, c *Cluster, rules []haRule) {
	x := newHAInput(d, c)
	for _, r := range rules {
		if r.inventory != nil {
			r.inventory(x)
		}
	}
}

// runHAWithDistro runs the distro half of rules; findings about the
// definition's own fields go to dd.
func runHAWithDistro(d, dd *document, c *Cluster, ds *Distro, with string, rules []haRule) {
	x := newHAInput(d, c)
	x.ds, x.dd, x.with = ds, dd, with
	for _, r := range rules {
		if r.distro != nil {
			r.distro(x)
		}
	}
}

// ruleOddControllers: etcd needs a majority; an even count tolerates no
// more failures than one fewer. A warning: it works (an error under
// Findings.Strict).
func ruleOddControllers(x *haInput) {
	if n := len(x.controllers); n > 1 && n%2 == 0 {
		x.d.warnf("spec.hosts", "%d controllers: an even number tolerates no more failures than %d and risks a split vote; use an odd number", n, n-1)
	}
}

// ruleAPIAddress: with several controllers the API address must not be
// one node's own. The VIP's collisions are vip-collision's.
func ruleAPIAddress(x *haInput) {
	cfg := &x.c.Spec.Config
	lb := cfg.Loadbalancer
	if !x.ha() || lb == "" || cfg.VIP != nil && lb == cfg.VIP.IP() {
		return
	}
	for i := range x.c.Spec.Hosts {
		h := x.host(i)
		if lb != h.PrivateAddress && lb != h.Address() && lb != h.Hostname {
			continue
		}
		if cfg.VIP != nil {
			x.d.errorf("spec.config.loadbalancer", "%s is the address of spec.hosts[%d] (%s): with %d controllers the API still dies with that one node; leave loadbalancer out to use the VIP %s, or name a load balancer", lb, i, h.Name(), len(x.controllers), cfg.VIP.IP())
		} else {
			// A warning: the fleets and guides join through the founder on purpose.
			x.d.warnf("spec.config.loadbalancer", "%s is the address of spec.hosts[%d] (%s): with %d controllers the API still dies with that one node; use a VIP or an external load balancer", lb, i, h.Name(), len(x.controllers))
		}
		return
	}
}

// ruleVIPSubnet: a VIP moves between controllers by ARP or NDP, inside
// one subnet. Only a written prefix says which; without one apply checks
// the hosts' own.
func ruleVIPSubnet(x *haInput) {
	v := x.c.Spec.Config.VIP
	if !x.vip.IsValid() || v.Prefix() < 0 {
		return
	}
	prefix := netip.MustParsePrefix(v.Address).Masked()
	var outside []string
	for _, i := range x.controllers {
		h := x.host(i)
		a, err := netip.ParseAddr(h.PrivateAddress)
		if err != nil {
			continue // discovered on the host; apply checks it there
		}
		if !prefix.Contains(a.Unmap()) {
			outside = append(outside, fmt.Sprintf("spec.hosts[%d] (%s) is %s", i, h.Name(), h.PrivateAddress))
		}
	}
	if len(outside) > 0 {
		x.d.errorf("spec.config.vip.address", "%s is not in the controllers' subnet: %s, outside %s; the VIP can only move between controllers on one subnet", v.Address, strings.Join(outside, "; "), prefix)
	}
}

// ruleVIPCollision: a VIP must be a free address, or its holder and the
// host that owns it both answer for it.
func ruleVIPCollision(x *haInput) {
	if !x.vip.IsValid() {
		return
	}
	for i := range x.c.Spec.Hosts {
		h := x.host(i)
		for _, own := range []struct{ field, addr string }{{"privateAddress", h.PrivateAddress}, {"address", h.Address()}} {
			if a, err := netip.ParseAddr(own.addr); err == nil && a.Unmap() == x.vip.Unmap() {
				x.d.errorf("spec.config.vip.address", "%s is also the %s of spec.hosts[%d] (%s); a VIP must be an address no host owns", x.vip, own.field, i, h.Name())
				return
			}
		}
	}
}

// setting is one engine config key of a host as the renderer resolves it:
// the host's profile's key replaces the distro's (docs/cluster.md,
// spec.config.profiles[]). doc and path are where it is written.
type setting struct {
	doc  *document
	path string
	v    any
}

// engineSetting is keys (nested for kubeadm's documents) of h's engine
// config, or nil when neither the profile nor the distro sets it.
func (x *haInput) engineSetting(h *Host, keys ...string) *setting {
	name := cmp.Or(h.Profile, defaultProfile(h.Role))
	for i, p := range x.c.Spec.Config.Profiles {
		if p.Name != name {
			continue
		}
		if v, path, ok := lookupKeys(p.EngineConfig, keys); ok {
			return &setting{doc: x.d, path: joinPath(fmt.Sprintf("spec.config.profiles[%d]", i), "engineConfig") + path, v: v}
		}
		break
	}
	if v, path, ok := lookupKeys(x.ds.Spec.Config.Engine.Config, keys); ok {
		return &setting{doc: x.dd, path: "spec.config.engine.config" + path, v: v}
	}
	return nil
}

// lookupKeys follows keys through nested mappings; the last may be
// written "key+" (an append, which sets the key too). path is the field
// path below m, starting with a '.' or '['.
func lookupKeys(m map[string]any, keys []string) (any, string, bool) {
	path := ""
	for i, k := range keys {
		last := i == len(keys)-1
		v, ok := m[k]
		if !ok && last {
			k += "+"
			v, ok = m[k]
		}
		if !ok {
			return nil, "", false
		}
		path += childPath(k)
		if last {
			return v, path, true
		}
		if m, ok = v.(map[string]any); !ok {
			return nil, "", false
		}
	}
	return nil, "", false
}

// childPath is the path segment of key below a parent: ".key", or
// ["key"] for a key a path cannot spell bare.
func childPath(key string) string { return joinPath("x", key)[1:] }

// settingGroups gathers the controllers by where key is written for
// them, in the order first seen; only settings keep decides on count.
func (x *haInput) settingGroups(keep func(any) bool, keys ...string) []settingGroup {
	var out []settingGroup
	for _, i := range x.controllers {
		s := x.engineSetting(x.host(i), keys...)
		if s == nil || !keep(s.v) {
			continue
		}
		j := slices.IndexFunc(out, func(g settingGroup) bool { return g.doc == s.doc && g.path == s.path })
		if j < 0 {
			out = append(out, settingGroup{setting: *s})
			j = len(out) - 1
		}
		out[j].hosts = append(out[j].hosts, i)
	}
	return out
}

type settingGroup struct {
	setting
	hosts []int
}

func count(gs []settingGroup) int {
	n := 0
	for _, g := range gs {
		n += len(g.hosts)
	}
	return n
}

// truthy reads an engine flag as the engines do: true, or "true".
func truthy(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return strings.EqualFold(t, "true")
	}
	return false
}

func isSet(v any) bool { return v != nil && firstString(v) != "" }

func isFalse(v any) bool {
	switch t := v.(type) {
	case bool:
		return !t
	case string:
		return strings.EqualFold(t, "false")
	}
	return false
}

// ruleFounder: cargoship founds the cluster on the first controller and
// joins every other to it (docs/reference/engines.md); an engine config
// that founds on several, or joins the founder elsewhere, leaves no one
// founder.
func ruleFounder(x *haInput) {
	engine := x.ds.Spec.Type
	if !x.ha() || engine != EngineK3s && engine != EngineRKE2 {
		return
	}
	founder := x.host(x.controllers[0])
	n := len(x.controllers)
	if engine == EngineK3s {
		inits := x.settingGroups(truthy, "cluster-init")
		if total := count(inits); total > 1 {
			for _, g := range inits {
				x.report(SeverityError, g.doc, g.path, "sets cluster-init for %s: with it %d of the %d controllers would found the cluster; cargoship founds it on the first controller, %s, by itself and joins the rest to it, so remove the key", x.names(g.hosts), total, n, founder.Name())
			}
		}
		if s := x.engineSetting(founder, "cluster-init"); s != nil && isFalse(s.v) {
			if ds := x.engineSetting(founder, "datastore-endpoint"); ds == nil || !isSet(ds.v) {
				x.report(SeverityError, s.doc, s.path, "turns cluster-init off on the founder %s: it then starts on SQLite, which no other controller can join; remove the key", founder.Name())
			}
		}
	}
	for _, g := range x.settingGroups(isSet, "server") {
		effect := "the others' is overwritten, so the key only hides which controller founds the cluster"
		if g.hosts[0] == x.controllers[0] {
			effect = fmt.Sprintf("with it the founder, %s, would join %s instead of founding the cluster", founder.Name(), firstString(g.v))
		}
		x.report(SeverityError, g.doc, g.path, "sets server for %s: cargoship founds the cluster on the first controller, %s, and writes every other node's server itself; %s; remove the key", x.names(g.hosts), founder.Name(), effect)
	}
}

// ruleDatastore: several controllers are fault-tolerant through their
// embedded etcd; an external datastore moves that to something cargoship
// neither installs nor checks, which the inventory must say it means.
func ruleDatastore(x *haInput) {
	if !x.ha() || x.c.Spec.Config.ExternalDatastore {
		return
	}
	const why = "the control plane is then only as available as a datastore cargoship neither installs nor checks; set spec.config.externalDatastore: true if that is meant"
	switch x.ds.Spec.Type {
	case EngineK3s, EngineRKE2:
		for _, g := range x.settingGroups(isSet, "datastore-endpoint") {
			x.report(SeverityError, g.doc, g.path, "points %d controllers (%s) at an external datastore: %s", len(g.hosts), x.names(g.hosts), why)
		}
		for _, g := range x.settingGroups(truthy, "disable-etcd") {
			x.report(SeverityError, g.doc, g.path, "runs %d controllers (%s) without an etcd member, so the cluster's state lives elsewhere: %s", len(g.hosts), x.names(g.hosts), why)
		}
	case EngineUpstream:
		for _, g := range x.settingGroups(isSet, "clusterConfiguration", "etcd", "external") {
			x.report(SeverityError, g.doc, g.path, "gives %d controllers (%s) kubeadm's external etcd: %s", len(g.hosts), x.names(g.hosts), why)
		}
	}
}

// networkRange is a CIDR the cluster hands out, and where it comes from.
type networkRange struct {
	what, from string
	prefix     netip.Prefix
}

// clusterNetworks are the Service and pod CIDRs the controllers' engine
// config sets, and the engine's default for a controller that sets none
// (docs/validate.md, HA checks).
func (x *haInput) clusterNetworks() []networkRange {
	type network struct {
		what     string
		keys     []string
		fallback string
	}
	var nets []network
	switch x.ds.Spec.Type {
	case EngineK3s, EngineRKE2:
		nets = []network{{"Service CIDR", []string{"service-cidr"}, "10.43.0.0/16"}, {"pod CIDR", []string{"cluster-cidr"}, "10.42.0.0/16"}}
	case EngineUpstream:
		// kubeadm has no default pod subnet.
		nets = []network{{"Service CIDR", []string{"clusterConfiguration", "networking", "serviceSubnet"}, "10.96.0.0/12"}, {"pod CIDR", []string{"clusterConfiguration", "networking", "podSubnet"}, ""}}
	}
	var out []networkRange
	for _, n := range nets {
		groups := x.settingGroups(func(any) bool { return true }, n.keys...)
		for _, g := range groups {
			for _, s := range splitItems(g.v) {
				if p, err := netip.ParsePrefix(s); err == nil {
					out = append(out, networkRange{n.what, g.path + " of " + x.docName(g.doc), p.Masked()})
				}
			}
		}
		if count(groups) < len(x.controllers) && n.fallback != "" {
			out = append(out, networkRange{n.what, x.ds.Spec.Type + "'s default", netip.MustParsePrefix(n.fallback)})
		}
	}
	return out
}

// docName names a document in a message about the other one.
func (x *haInput) docName(doc *document) string {
	if doc == x.d {
		return "the inventory"
	}
	return doc.file
}

// splitItems reads a value that is one string, a comma-separated string
// or a list of those.
func splitItems(v any) []string {
	var out []string
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	default:
		items = []any{t}
	}
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			continue
		}
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// ruleVIPNetworks: kube-proxy (or the CNI) routes the Service CIDR, and
// pods are given the pod CIDR; a VIP inside either is unreachable or
// given away.
func ruleVIPNetworks(x *haInput) {
	if !x.vip.IsValid() {
		return
	}
	for _, n := range x.clusterNetworks() {
		if n.prefix.Contains(x.vip.Unmap()) {
			x.report(SeverityError, x.d, "spec.config.vip.address", "%s is inside the %s %s (%s): the cluster routes that range itself; pick a VIP outside it", x.vip, n.what, n.prefix, n.from)
		}
	}
}

// ruleVIPPools: a load-balancer allocator hands the addresses of its pool
// to Services; the VIP inside one is given away twice.
func ruleVIPPools(x *haInput) {
	if !x.vip.IsValid() {
		return
	}
	data := chartTemplateData(x.c)
	for _, chart := range sortedKeys(x.ds.Spec.Config.Engine.Manifest) {
		base := joinPath("spec.config.engine.manifest", chart)
		walkValues(renderedValues(x.ds.Spec.Config.Engine.Manifest[chart], data), "", func(path, key string, v any) {
			_, block := v.(map[string]any)
			if !poolKey(key) && (key != "" || !block) {
				return // neither a pool's key nor a {start, stop} list item
			}
			for _, item := range poolItems(v) {
				if item.contains(x.vip.Unmap()) {
					x.report(SeverityError, x.d, "spec.config.vip.address", "%s is inside %s, an address pool %s%s of %s declares: its allocator could hand the VIP to a Service too; pick a VIP outside it", x.vip, item.text, base, path, x.dd.file)
				}
			}
		})
	}
}

// ruleCNIEndpoint: a CNI told to reach the API at one node's address
// loses it with that node, however many controllers there are. Values
// are read as the renderer writes them for this inventory (templates
// filled in).
func ruleCNIEndpoint(x *haInput) {
	cfg := &x.c.Spec.Config
	data := chartTemplateData(x.c)
	for _, chart := range sortedKeys(x.ds.Spec.Config.Engine.Manifest) {
		raw := x.ds.Spec.Config.Engine.Manifest[chart]
		base := joinPath("spec.config.engine.manifest", chart)
		written := map[string]string{}
		walkValues(chartValues(raw), "", func(path, _ string, v any) {
			if s, ok := v.(string); ok {
				written[path] = s
			}
		})
		walkValues(renderedValues(raw, data), "", func(path, key string, v any) {
			s, ok := v.(string)
			if !ok || !cniEndpointKey(path, key) {
				return
			}
			at := func(format string, args ...any) {
				line, col := valuePosition(x.dd, base, path, raw)
				x.dd.findings = append(x.dd.findings, Finding{Severity: SeverityError, File: x.dd.file, Line: line, Column: col, Path: base + path,
					Message: "with " + x.d.file + ": " + fmt.Sprintf(format, args...)})
			}
			shown := strconv.Quote(s)
			if w := written[path]; w != s {
				shown = fmt.Sprintf("%q (%q as rendered for this inventory)", w, s)
			}
			switch {
			case s == "":
				if w := written[path]; strings.Contains(w, ".VIP") && cfg.VIP == nil {
					at("%s names the VIP, and the inventory sets no spec.config.vip: the CNI would have no API address", shown)
				}
				return
			case s == "localhost" || isLoopback(s) || s == cfg.APIAddress() || cfg.VIP != nil && s == cfg.VIP.IP():
				return // a node-local proxy, or the API address itself
			}
			if x.ha() {
				for i := range x.c.Spec.Hosts {
					h := x.host(i)
					if s == h.PrivateAddress || s == h.Address() || s == h.Hostname {
						at("%s is the address of spec.hosts[%d] (%s): with %d controllers the CNI loses the API with that node; use %s", shown, i, h.Name(), len(x.controllers), apiHint(cfg))
						return
					}
				}
			}
			if isIP(s) && cfg.VIP != nil {
				at("%s is not the VIP %s (nor the API address); use %s", shown, cfg.VIP.IP(), apiHint(cfg))
			}
		})
	}
}

func apiHint(cfg *ClusterConfig) string {
	if cfg.VIP != nil {
		return `"{{ .VIP }}", the VIP`
	}
	return `"{{ .APIAddress }}", the API address, with a VIP or a load balancer behind it`
}

func isLoopback(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.IsLoopback()
}
