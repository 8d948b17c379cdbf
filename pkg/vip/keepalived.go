package vip

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"text/template"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Paths cargoship writes on every controller for keepalived. The daemon
// reads /etc/keepalived/keepalived.conf on Debian and Enterprise Linux
// alike (docs/reference/keepalived.md).
const (
	ConfigPath      = "/etc/keepalived/keepalived.conf"
	CheckScriptPath = "/etc/keepalived/cargoship-check-apiserver.sh"
	Service         = "keepalived.service"
)

// topPriority is the first controller's VRRP priority; each next one in
// the order gets priorityStep less. 255 is reserved for an address owner.
const (
	topPriority  = 200
	priorityStep = 10
)

// Keepalived is one controller's keepalived configuration.
type Keepalived struct {
	// Cluster names the VRRP instance's router_id.
	Cluster string
	// Host is the controller, as messages name it.
	Host string
	// Interface carries the address and the VRRP traffic.
	Interface string
	// Address is this controller's private address: VRRP's unicast source.
	Address string
	// Peers are the other controllers' private addresses.
	Peers []string
	// Priority is this controller's VRRP priority.
	Priority int
	// VIP is the floating address with its prefix length.
	VIP netip.Prefix
	// Settings are the keepalived settings with defaults filled.
	Settings v1alpha1.Keepalived
}

// Order is the controllers highest priority first: those keepalived's
// priority list names, in its order, then the rest in inventory order.
func Order(c *v1alpha1.Cluster) []*v1alpha1.Host {
	var controllers []*v1alpha1.Host
	for i := range c.Spec.Hosts {
		if c.Spec.Hosts[i].IsController() {
			controllers = append(controllers, &c.Spec.Hosts[i])
		}
	}
	var named []string
	if v := c.Spec.Config.VIP; v != nil && v.Keepalived != nil {
		named = v.Keepalived.Priority
	}
	var out []*v1alpha1.Host
	taken := map[*v1alpha1.Host]bool{}
	for _, n := range named {
		for _, h := range controllers {
			if !taken[h] && (h.Name() == n || h.Address() == n || h.PrivateAddress == n) {
				out, taken[h] = append(out, h), true
			}
		}
	}
	for _, h := range controllers {
		if !taken[h] {
			out = append(out, h)
		}
	}
	return out
}

// PriorityOf is the VRRP priority of the controller at index i of Order.
func PriorityOf(i int) int {
	return max(topPriority-priorityStep*i, 1)
}

// Prefix is the VIP as keepalived's virtual_ipaddress takes it: the
// address with its written prefix length, else a host route (/32, /128),
// as kube-vip's default is.
func Prefix(v *v1alpha1.VIP) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(v.Address); err == nil {
		return p, nil
	}
	a, err := netip.ParseAddr(v.Address)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("spec.config.vip.address %q is not an IP address", v.Address)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Config renders keepalived.conf. Every controller starts as BACKUP: the
// one with the highest priority whose check passes becomes MASTER, so no
// controller holds the address before its API server answers. Adverts go
// to the peers by unicast, and are taken only from a peer's address with
// TTL 255, so no host off the segment can move the VIP. There is no VRRP
// password: docs/ha.md says why. A lone controller has no peer, and
// keepalived multicasts, which requires TTL 255 by itself.
func (k Keepalived) Config() ([]byte, error) {
	if err := k.checkValues(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err := configTemplate.Execute(&b, struct {
		Keepalived
		Check       v1alpha1.KeepalivedCheck
		ScriptPath  string
		VIPAddr     string
		VIPPrefix   int
		RouterIDTag string
	}{k, *k.Settings.Check, CheckScriptPath, k.VIP.Addr().String(), k.VIP.Bits(), "cargoship_" + strings.ReplaceAll(k.Cluster, "-", "_")})
	return b.Bytes(), err
}

var configTemplate = template.Must(template.New("keepalived.conf").Parse(`# Written by cargoship for cluster {{.Cluster}} (docs/ha.md); an apply rewrites it.
global_defs {
    router_id {{.RouterIDTag}}
    enable_script_security
    script_user root
}

vrrp_script cargoship_apiserver {
    script "{{.ScriptPath}}"
    interval {{.Check.Interval}}
    timeout {{.Check.Timeout}}
    fall {{.Check.Fall}}
    rise {{.Check.Rise}}
}

vrrp_instance cargoship_api {
    state BACKUP
    interface {{.Interface}}
    virtual_router_id {{.Settings.RouterID}}
    priority {{.Priority}}
    advert_int {{.Settings.AdvertInterval}}
{{- if .Peers}}
    # Adverts are taken only from a peer below, sent with TTL 255 and
    # received with it: no router between (docs/ha.md, "Who can move the VIP").
    unicast_src_ip {{.Address}}
    unicast_ttl 255
    unicast_peer {
{{- range .Peers}}
        {{.}} min_ttl 255
{{- end}}
    }
    check_unicast_src
{{- end}}
    virtual_ipaddress {
        {{.VIPAddr}}/{{.VIPPrefix}} dev {{.Interface}}
    }
    track_script {
        cargoship_apiserver
    }
}
`))

// CheckScript is the health check keepalived runs: it fails when the local
// API server does not answer /readyz. kubectl is the engine's own kubectl
// command line with the admin kubeconfig, pointed at this controller's own
// address, which every controller's serving certificate names.
func CheckScript(kubectl string) []byte {
	return []byte("#!/bin/sh\n" +
		"# Written by cargoship (docs/ha.md): keepalived gives the API address up\n" +
		"# when this controller's own API server does not answer /readyz.\n" +
		kubectl + " >/dev/null 2>&1\n")
}
