package firewall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Reading firewalld through firewall-cmd costs a Python start per call:
// a plan read took twelve, about 3 CPU-seconds on a host and 40 seconds on
// an emulated one. firewalldDBusProgram reads the same configuration over
// firewalld's documented D-Bus interface (firewalld.dbus(5),
// docs/reference/hosts.md §5.1) in one Python start, with the interpreter
// and the dbus module firewall-cmd itself runs on, so a host that has a
// working firewall-cmd has what it needs. Its calls wait up to ten minutes
// where firewall-cmd gives up after D-Bus's 25 seconds: a read queued
// behind a slow reload is answered late, not lost.
//
// It is passed to `python -c`, never written to a file: fapolicyd denies
// opening an untrusted file of a language's type (docs/reference/hosts.md §7). It exits 3
// when it cannot run (no dbus module), and the shell then reads through
// firewall-cmd as before. It must run on Python 3.6 (RHEL 8's
// platform-python).
const firewalldDBusProgram = `import json, sys
try:
    import dbus
except ImportError:
    sys.exit(3)
N = "org.fedoraproject.FirewallD1"
C = N + ".config"
iface, service, sets = sys.argv[1], sys.argv[2], sys.argv[3:]
def call(o, i, m, *a):
    return getattr(o, m)(*a, dbus_interface=i, timeout=600)
def strs(v):
    return [str(x) for x in v]
def zone(name, get):
    return {"name": name, "sources": strs(get("getSources")),
            "services": strs(get("getServices")), "rich": strs(get("getRichRules"))}
try:
    bus = dbus.SystemBus()
    obj = lambda path: bus.get_object(N, path, introspect=False)
    fw, cfg = obj("/org/fedoraproject/FirewallD1"), obj("/org/fedoraproject/FirewallD1/config")
    z = ""
    if iface:
        try:
            z = str(call(fw, N + ".zone", "getZoneOfInterface", iface))
        except dbus.DBusException:
            z = ""
    z = z or str(call(fw, N, "getDefaultZone"))
    names = strs(call(fw, N + ".ipset", "getIPSets"))
    run = {"ipsets": names,
           "entries": dict((s, strs(call(fw, N + ".ipset", "getEntries", s))) for s in sets if s in names),
           "zones": [zone(n, lambda m: call(fw, N + ".zone", m, n)) for n in strs(call(fw, N + ".zone", "getZones"))]}
    names = strs(call(cfg, C, "getIPSetNames"))
    entries = {}
    for s in sets:
        if s in names:
            entries[s] = strs(call(obj(call(cfg, C, "getIPSetByName", s)), C + ".ipset", "getEntries"))
    zones = []
    for n in strs(call(cfg, C, "getZoneNames")):
        o = obj(call(cfg, C, "getZoneByName", n))
        zones.append(zone(n, lambda m: call(o, C + ".zone", m)))
    services = strs(call(cfg, C, "getServiceNames"))
    ports = None
    if service in services:
        o = obj(call(cfg, C, "getServiceByName", service))
        ports = ["%s/%s" % (p, q) for p, q in call(o, C + ".service", "getPorts")]
    perm = {"ipsets": names, "entries": entries, "zones": zones, "services": services, "ports": ports}
except dbus.DBusException as e:
    sys.stderr.write("firewalld over D-Bus: %s: %s\n" % (e.get_dbus_name(), e.get_dbus_message()))
    sys.exit(1)
json.dump({"zone": z, "permanent": perm, "runtime": run}, sys.stdout)
sys.stdout.write("\n")`

// firewalldDBusTry defines fwdbus: it runs firewalldDBusProgram ($1) with
// the rest of its arguments under the interpreter named on firewall-cmd's
// first line (toolPython), and prints "@@dbus" and the program's JSON; it
// returns 3 when that is not a Python one, or the program cannot run. The
// reading scripts go on to firewall-cmd then.
const firewalldDBusTry = toolPython + `fwdbus() {
  pyof firewall-cmd || return 3
  fwout=$(set -f; $py -c "$@") || return $?
  printf '@@dbus %s\n' "$fwout"
}
`

// fwDBusRead is firewalldDBusProgram's answer.
type fwDBusRead struct {
	Zone      string     `json:"zone"`
	Permanent fwDBusConf `json:"permanent"`
	Runtime   fwDBusConf `json:"runtime"`
}

// fwDBusConf is one of firewalld's two configurations. Services and Ports
// are read from the permanent one only, as firewall-cmd was asked; Ports
// is null when the service cargoship owns does not exist.
type fwDBusConf struct {
	IPSets   []string            `json:"ipsets"`
	Entries  map[string][]string `json:"entries"`
	Zones    []fwDBusZone        `json:"zones"`
	Services []string            `json:"services"`
	Ports    *[]string           `json:"ports"`
}

type fwDBusZone struct {
	Name     string   `json:"name"`
	Sources  []string `json:"sources"`
	Services []string `json:"services"`
	Rich     []string `json:"rich"`
}

// dbusPayload returns the JSON after the "@@dbus " marker, when out is
// the D-Bus reader's.
func dbusPayload(out string) (string, bool) {
	return strings.CutPrefix(out, "@@dbus ")
}

func parseDBusRead(payload string) (fwDBusRead, error) {
	var d fwDBusRead
	if err := json.Unmarshal([]byte(payload), &d); err != nil {
		return d, fmt.Errorf("reading firewalld's answer over D-Bus: %w", err)
	}
	if d.Zone == "" || strings.ContainsAny(d.Zone, " \t") {
		return d, fmt.Errorf("no zone found: firewalld answered %q", d.Zone)
	}
	return d, nil
}

func (c fwDBusConf) zone(name string) fwDBusZone {
	for _, z := range c.Zones {
		if z.Name == name {
			return z
		}
	}
	return fwDBusZone{}
}

// state is what a plan reads of c, as parseFWState reads firewall-cmd's.
func (c fwDBusConf) state(zone string) fwState {
	st := fwState{ipsets: map[string]bool{}, entries: map[string][]string{}, services: map[string]bool{}}
	addAll(st.ipsets, c.IPSets)
	for set, e := range c.Entries {
		st.entries[set] = append(st.entries[set], e...)
	}
	st.trusted = c.zone(TrustedZone).Sources
	z := c.zone(zone)
	st.zoneServices, st.rich = z.Services, z.Rich
	if c.Ports != nil {
		st.services[FirewalldServ] = true
		st.ports = *c.Ports
	}
	return st
}

// own is what reset and a removed peer read of c, as readFirewalldOwn
// reads firewall-cmd's: the ipsets and their entries, and with all the
// services and the zones too, rich rules only for richZones.
func (c fwDBusConf) own(all bool, richZones []string) fwOwn {
	st := newFWOwn()
	addAll(st.ipsets, c.IPSets)
	for set, e := range c.Entries {
		st.entries[set] = append(st.entries[set], e...)
	}
	if !all {
		return st
	}
	addAll(st.services, c.Services)
	for _, z := range c.Zones {
		st.zones = append(st.zones, z.Name)
		st.sources[z.Name], st.zoneServices[z.Name] = z.Sources, z.Services
		for _, rz := range richZones {
			if rz == z.Name {
				st.rich[z.Name] = z.Rich
			}
		}
	}
	return st
}

// dbusProgram is the D-Bus reader f runs, or one that says it cannot run
// when f reads through firewall-cmd.
func dbusProgram(f Firewalld) string {
	if f.viaFirewallCmd {
		return "import sys; sys.exit(3)"
	}
	return firewalldDBusProgram
}
