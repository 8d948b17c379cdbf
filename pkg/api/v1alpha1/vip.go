package v1alpha1

import (
	"net/netip"
	"strings"
	"time"
)

// VIP providers: who holds the floating API address (docs/ha.md).
const (
	VIPKubeVIP    = "kube-vip"
	VIPKeepalived = "keepalived"
)

// VIP is a floating API address cargoship brings up on the controllers
// (docs/ha.md): announced by a leader-elected kube-vip, or by keepalived
// as a host service.
type VIP struct {
	// Address is the floating IPv4 or IPv6 address, in the controllers' subnet.
	Address string `json:"address"`
	// Interface carries the address (default: each controller's privateInterface).
	Interface string `json:"interface,omitempty"`
	// Provider announces the address: kube-vip (the default) or keepalived.
	Provider string `json:"provider,omitempty" jsonschema:"enum=kube-vip,enum=keepalived"`
	// WaitTimeout bounds apply's wait for the address to answer TLS with the cluster's CA (default 3m).
	WaitTimeout string `json:"waitTimeout,omitempty"`
	// KubeVIP are kube-vip's settings.
	KubeVIP *KubeVIP `json:"kubeVip,omitempty"`
	// Keepalived are keepalived's settings.
	Keepalived *Keepalived `json:"keepalived,omitempty"`
}

// KubeVIP are the settings of a kube-vip control-plane DaemonSet (or
// static pod, for the upstream engine).
type KubeVIP struct {
	// Image is the kube-vip image (default: the distro's spec.config.kubeVip.image); the package must carry it.
	Image string `json:"image,omitempty"`
	// LeaseDuration is the leader-election lease in seconds (default 5).
	LeaseDuration int `json:"leaseDuration,omitempty"`
	// RenewDeadline is how long the leader tries to renew, in seconds (default 3).
	RenewDeadline int `json:"renewDeadline,omitempty"`
	// RetryPeriod is the time between election attempts, in seconds (default 1).
	RetryPeriod int `json:"retryPeriod,omitempty"`
}

// Keepalived are the settings of keepalived, run as a host service on every
// controller with unicast VRRP between their private addresses.
type Keepalived struct {
	// RouterID is the VRRP virtual_router_id, 1-255 (default 51); unique on the segment.
	RouterID int `json:"routerId,omitempty"`
	// Priority names the controllers, highest priority first (default: their inventory order).
	Priority []string `json:"priority,omitempty"`
	// AdvertInterval is the VRRP advertisement interval in seconds (default 1).
	AdvertInterval int `json:"advertInterval,omitempty"`
	// Check is the health check that gives up the address when the local API does not answer /readyz.
	Check *KeepalivedCheck `json:"check,omitempty"`
}

// KeepalivedCheck is keepalived's vrrp_script against the local API server.
type KeepalivedCheck struct {
	// Interval between checks in seconds (default 2).
	Interval int `json:"interval,omitempty"`
	// Timeout of one check in seconds (default 2).
	Timeout int `json:"timeout,omitempty"`
	// Fall is how many failed checks give the address up (default 2).
	Fall int `json:"fall,omitempty"`
	// Rise is how many passed checks make a controller eligible again (default 2).
	Rise int `json:"rise,omitempty"`
}

// DistroKubeVIP names the kube-vip image a distro carries for clusters whose
// VIP provider is kube-vip.
type DistroKubeVIP struct {
	// Image is the kube-vip image; it must also be listed in imageConfig.images.
	Image string `json:"image"`
}

// Defaults of a VIP's settings (docs/cluster.md, spec.config.vip).
const (
	DefaultVIPWaitTimeout       = 3 * time.Minute
	DefaultKubeVIPLeaseDuration = 5
	DefaultKubeVIPRenewDeadline = 3
	DefaultKubeVIPRetryPeriod   = 1
	DefaultKeepalivedRouterID   = 51
	DefaultKeepalivedAdvert     = 1
	DefaultKeepalivedInterval   = 2
	DefaultKeepalivedTimeout    = 2
	DefaultKeepalivedFall       = 2
	DefaultKeepalivedRise       = 2
)

// ProviderName is the provider, kube-vip when unset.
func (v *VIP) ProviderName() string {
	if v.Provider == "" {
		return VIPKubeVIP
	}
	return v.Provider
}

// IP is the address without a prefix length: "10.0.0.5/24" -> "10.0.0.5".
func (v *VIP) IP() string {
	ip, _, _ := strings.Cut(v.Address, "/")
	return ip
}

// Prefix is the address's prefix length, or -1 when the address has none.
func (v *VIP) Prefix() int {
	p, err := netip.ParsePrefix(v.Address)
	if err != nil {
		return -1
	}
	return p.Bits()
}

// Timeout is WaitTimeout parsed, DefaultVIPWaitTimeout when unset or invalid
// (validation reports an invalid one).
func (v *VIP) Timeout() time.Duration {
	if d, err := time.ParseDuration(v.WaitTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultVIPWaitTimeout
}

// KubeVIPSettings are the kube-vip settings with defaults filled.
func (v *VIP) KubeVIPSettings() KubeVIP {
	var k KubeVIP
	if v.KubeVIP != nil {
		k = *v.KubeVIP
	}
	k.LeaseDuration = orDefault(k.LeaseDuration, DefaultKubeVIPLeaseDuration)
	k.RenewDeadline = orDefault(k.RenewDeadline, DefaultKubeVIPRenewDeadline)
	k.RetryPeriod = orDefault(k.RetryPeriod, DefaultKubeVIPRetryPeriod)
	return k
}

// KeepalivedSettings are the keepalived settings with defaults filled.
func (v *VIP) KeepalivedSettings() Keepalived {
	var k Keepalived
	if v.Keepalived != nil {
		k = *v.Keepalived
	}
	k.RouterID = orDefault(k.RouterID, DefaultKeepalivedRouterID)
	k.AdvertInterval = orDefault(k.AdvertInterval, DefaultKeepalivedAdvert)
	var c KeepalivedCheck
	if k.Check != nil {
		c = *k.Check
	}
	c.Interval = orDefault(c.Interval, DefaultKeepalivedInterval)
	c.Timeout = orDefault(c.Timeout, DefaultKeepalivedTimeout)
	c.Fall = orDefault(c.Fall, DefaultKeepalivedFall)
	c.Rise = orDefault(c.Rise, DefaultKeepalivedRise)
	k.Check = &c
	return k
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// APIAddress is the address clients and joining nodes reach the API at:
// loadbalancer, else the VIP's address.
func (c *ClusterConfig) APIAddress() string {
	if c.Loadbalancer == "" && c.VIP != nil {
		return c.VIP.IP()
	}
	return c.Loadbalancer
}
