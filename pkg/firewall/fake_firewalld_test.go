package firewall

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// fakeFirewalld models firewall-cmd 1.x as docs/reference/hosts.md §5.1
// describes it: --permanent changes only the permanent configuration, --reload
// copies it to the runtime, runtime references to unknown ipsets are
// INVALID_IPSET, repeated adds are warnings with exit 0, --new-* on an
// existing name is NAME_CONFLICT (26), and a source belongs to one zone.
// --delete-ipset and --delete-service leave the zones naming them as they
// are, and a reload then fails (INVALID_SERVICE from the configuration
// check, INVALID_IPSET when the source is applied) and keeps the runtime.
//
// Repeated values of one option are taken only with --permanent, all or
// none, as one settings update is. LoseReplies and Busy model a daemon
// slower than firewall-cmd's 25-second D-Bus wait: the call named in
// LoseReplies is done and then reported as NoReply (exit 254), and the
// next Busy calls, --state included, are NoReply with nothing done; a
// lost reply makes the daemon busy for BusyAfterLoss calls.
type fakeFirewalld struct {
	Running     bool
	Default     string
	Interfaces  map[string]string // runtime interface -> zone
	Perm, Run   fwConf
	LoseReplies map[string]int // operation -> replies still to lose
	Busy        int
	// BusyAfterLoss is Busy's value after a lost reply.
	BusyAfterLoss int
}

type fwConf struct {
	IPSets   map[string]*fwIPSet
	Zones    map[string]*fwZone
	Services map[string][]string // custom services and their ports
}

type fwIPSet struct {
	Type, Family string
	Entries      []string
}

type fwZone struct {
	Sources, Services, Rich, Ports []string
	// ForwardPorts are printed, tab-indented as rich rules are, by
	// --list-all-zones; nothing cargoship does sets them
	ForwardPorts []string
}

var builtinServices = []string{"dhcpv6-client", "kube-apiserver", "kubelet", "ssh"}

func newFakeFirewalld() *fakeFirewalld {
	c := fwConf{IPSets: map[string]*fwIPSet{}, Services: map[string][]string{}, Zones: map[string]*fwZone{
		"public":   {Services: []string{"dhcpv6-client", "ssh"}},
		"trusted":  {},
		"internal": {Services: []string{"ssh"}},
	}}
	f := &fakeFirewalld{Running: true, Default: "public", Interfaces: map[string]string{"eth1": "internal"}, Perm: c}
	f.Run = clone(c)
	return f
}

// clone deep-copies a configuration.
func clone(c fwConf) fwConf {
	var out fwConf
	b, err := json.Marshal(c)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic(err)
	}
	return out
}

const fakeNoReply = "Error: Did not receive a reply. Possible causes include: the remote application did not send a reply, the message bus security policy blocked the reply, the reply timeout expired, or the network connection was broken."

func (f *fakeFirewalld) run(args []string) int {
	if f.Busy > 0 {
		f.Busy--
		return fail(254, fakeNoReply)
	}
	var fixed, values []string
	op := ""
	for _, a := range args {
		k, _, _ := strings.Cut(a, "=")
		switch k {
		case "--permanent", "--zone", "--ipset", "--service", "--type", "--family":
			fixed = append(fixed, a)
		default:
			if op != "" && op != k {
				return fail(2, "usage: two operations %s and %s", op, a)
			}
			op = k
			values = append(values, a)
		}
	}
	code := 0
	if len(values) > 1 {
		if !slices.Contains(args, "--permanent") {
			return fail(2, "fake firewall-cmd: several %s only with --permanent", op)
		}
		was := clone(f.Perm)
		for _, v := range values {
			if code = f.call(append(slices.Clone(fixed), v)); code != 0 {
				f.Perm = was
				return code
			}
		}
	} else {
		code = f.call(args)
	}
	if f.LoseReplies[op] > 0 {
		f.LoseReplies[op]--
		f.Busy = f.BusyAfterLoss
		return fail(254, fakeNoReply)
	}
	return code
}

// call runs one firewall-cmd operation with one value.
func (f *fakeFirewalld) call(args []string) int {
	perm := slices.Contains(args, "--permanent")
	conf := &f.Run
	if perm {
		conf = &f.Perm
	}
	opt := map[string]string{}
	var op string
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "--permanent":
		case "--zone", "--ipset", "--service", "--type", "--family":
			opt[k] = v
		default:
			if op != "" {
				return fail(2, "usage: two operations %s and %s", op, a)
			}
			op, opt["value"] = k, v
		}
	}
	if op == "--state" {
		if f.Running {
			fmt.Println("running")
			return 0
		}
		fmt.Println("not running")
		return 252
	}
	if !f.Running {
		return fail(252, "FirewallD is not running")
	}
	zoneName := opt["--zone"]
	if zoneName == "" {
		zoneName = f.Default
	}
	zone, zoneOK := conf.Zones[zoneName]
	needZone := func() int {
		if !zoneOK {
			return fail(112, "Error: INVALID_ZONE: %s", zoneName)
		}
		return 0
	}
	v := opt["value"]
	switch op {
	case "--reload":
		for _, n := range sortedKeys(f.Perm.Zones) {
			z := f.Perm.Zones[n]
			for _, svc := range z.Services {
				if _, ok := f.Perm.Services[svc]; !ok && !slices.Contains(builtinServices, svc) {
					return fail(101, "Error: INVALID_SERVICE: Zone '%s': '%s' not among existing services", n, svc)
				}
			}
			for _, src := range z.Sources {
				if name, ok := strings.CutPrefix(src, "ipset:"); ok && f.Perm.IPSets[name] == nil {
					return fail(135, "Error: INVALID_IPSET: %s", name)
				}
			}
		}
		f.Run = clone(f.Perm)
		fmt.Println("success")
	case "--get-zones":
		fmt.Println(strings.Join(sortedKeys(conf.Zones), " "))
	case "--get-default-zone":
		fmt.Println(f.Default)
	case "--get-zone-of-interface":
		z, ok := f.Interfaces[v]
		if !ok {
			fmt.Println("no zone")
			return 2
		}
		fmt.Println(z)
	case "--list-all-zones":
		f.listAllZones(conf, !perm)
	case "--info-service":
		ports, ok := conf.Services[v]
		if !ok && !slices.Contains(builtinServices, v) {
			return fail(101, "Error: INVALID_SERVICE: %s", v)
		}
		fmt.Printf("%s\n  ports: %s\n  protocols: \n  source-ports: \n  modules: \n  destination: \n  includes: \n  helpers: \n", v, strings.Join(ports, " "))
	case "--get-ipsets":
		fmt.Println(strings.Join(sortedKeys(conf.IPSets), " "))
	case "--new-ipset":
		if !perm {
			return fail(2, "Can be used only with --permanent")
		}
		if conf.IPSets[v] != nil {
			return fail(26, "Error: NAME_CONFLICT: new_ipset(): '%s'", v)
		}
		fam := opt["--family"]
		if fam == "" {
			fam = "inet"
		}
		conf.IPSets[v] = &fwIPSet{Type: opt["--type"], Family: fam}
		fmt.Println("success")
	case "--delete-ipset":
		if !perm {
			return fail(2, "Can be used only with --permanent")
		}
		if conf.IPSets[v] == nil {
			return fail(135, "Error: INVALID_IPSET: %s", v)
		}
		delete(conf.IPSets, v)
		fmt.Println("success")
	case "--get-entries", "--add-entry", "--remove-entry":
		set := conf.IPSets[opt["--ipset"]]
		if set == nil {
			return fail(135, "Error: INVALID_IPSET: %s", opt["--ipset"])
		}
		return listOp(&set.Entries, op, v, "--get-entries", "--add-entry", "--remove-entry", "\n")
	case "--list-sources", "--add-source", "--remove-source":
		if c := needZone(); c != 0 {
			return c
		}
		if op == "--add-source" {
			if name, ok := strings.CutPrefix(v, "ipset:"); ok && conf.IPSets[name] == nil {
				return fail(135, "Error: INVALID_IPSET: %s", name)
			}
			for n, z := range conf.Zones {
				if n != zoneName && slices.Contains(z.Sources, v) {
					return fail(18, "Error: ZONE_CONFLICT: '%s' already bound to a zone", v)
				}
			}
		}
		return listOp(&zone.Sources, op, v, "--list-sources", "--add-source", "--remove-source", " ")
	case "--get-services":
		names := append(slices.Clone(builtinServices), sortedKeys(conf.Services)...)
		sort.Strings(names)
		fmt.Println(strings.Join(names, " "))
	case "--new-service":
		if !perm {
			return fail(2, "Can be used only with --permanent")
		}
		if _, ok := conf.Services[v]; ok || slices.Contains(builtinServices, v) {
			return fail(26, "Error: NAME_CONFLICT: new_service(): '%s'", v)
		}
		conf.Services[v] = []string{}
	case "--delete-service":
		if !perm {
			return fail(2, "Can be used only with --permanent")
		}
		if _, ok := conf.Services[v]; !ok {
			return fail(101, "Error: INVALID_SERVICE: %s", v)
		}
		delete(conf.Services, v)
		fmt.Println("success")
	case "--list-ports", "--get-ports", "--add-port", "--remove-port":
		if opt["--service"] == "" { // the zone's own ports
			if c := needZone(); c != 0 {
				return c
			}
			return listOp(&zone.Ports, op, v, "--list-ports", "--add-port", "--remove-port", " ")
		}
		if !perm {
			return fail(2, "Can be used only with --permanent")
		}
		ports, ok := conf.Services[opt["--service"]]
		if !ok {
			return fail(101, "Error: INVALID_SERVICE: %s", opt["--service"])
		}
		code := listOp(&ports, op, v, "--get-ports", "--add-port", "--remove-port", " ")
		conf.Services[opt["--service"]] = ports
		return code
	case "--list-services", "--add-service", "--remove-service":
		if c := needZone(); c != 0 {
			return c
		}
		if _, ok := conf.Services[v]; op == "--add-service" && !ok && !slices.Contains(builtinServices, v) {
			return fail(101, "Error: INVALID_SERVICE: %s", v)
		}
		return listOp(&zone.Services, op, v, "--list-services", "--add-service", "--remove-service", " ")
	case "--list-rich-rules", "--add-rich-rule", "--remove-rich-rule":
		if c := needZone(); c != 0 {
			return c
		}
		return listOp(&zone.Rich, op, v, "--list-rich-rules", "--add-rich-rule", "--remove-rich-rule", "\n")
	default:
		return fail(2, "fake firewall-cmd: unsupported %q", op)
	}
	return 0
}

// listAllZones prints every zone as firewall-cmd's print_zone_info does
// (docs/reference/hosts.md §5.1): at runtime a zone with a source or an
// interface is "(active)", and each rich rule is a line indented with a
// tab, as each forward port is.
func (f *fakeFirewalld) listAllZones(conf *fwConf, runtime bool) {
	for _, n := range sortedKeys(conf.Zones) {
		z := conf.Zones[n]
		var ifaces []string
		for i, zn := range f.Interfaces {
			if zn == n && runtime {
				ifaces = append(ifaces, i)
			}
		}
		sort.Strings(ifaces)
		head := n
		if runtime && (len(ifaces) > 0 || len(z.Sources) > 0) {
			head += " (active)"
		}
		tabbed := func(l []string) string {
			if len(l) == 0 {
				return ""
			}
			return "\n\t" + strings.Join(l, "\n\t")
		}
		fmt.Printf("%s\n  target: default\n  icmp-block-inversion: no\n  interfaces: %s\n  sources: %s\n  services: %s\n  ports: %s\n  protocols: \n  forward: yes\n  masquerade: no\n  forward-ports: %s\n  source-ports: \n  icmp-blocks: \n  rich rules: %s\n\n",
			head, strings.Join(ifaces, " "), strings.Join(z.Sources, " "), strings.Join(z.Services, " "),
			strings.Join(z.Ports, " "), tabbed(z.ForwardPorts), tabbed(z.Rich))
	}
}

// listOp lists, adds or removes one item the way firewall-cmd does.
func listOp(list *[]string, op, v, get, add, remove, sep string) int {
	switch op {
	case get:
		if len(*list) > 0 {
			fmt.Println(strings.Join(*list, sep))
		} else {
			fmt.Println()
		}
	case add:
		if slices.Contains(*list, v) {
			fmt.Fprintf(os.Stderr, "Warning: ALREADY_ENABLED: %s\n", v)
		} else {
			*list = append(*list, v)
		}
		fmt.Println("success")
	case remove:
		i := slices.Index(*list, v)
		if i < 0 {
			fmt.Fprintf(os.Stderr, "Warning: NOT_ENABLED: %s\n", v)
		} else {
			*list = slices.Delete(*list, i, i+1)
		}
		fmt.Println("success")
	}
	return 0
}

func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return code
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
