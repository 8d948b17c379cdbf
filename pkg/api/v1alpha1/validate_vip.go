package v1alpha1

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// VIPProviders lists every valid spec.config.vip.provider.
var VIPProviders = []string{VIPKubeVIP, VIPKeepalived}

// CheckVIPAddress accepts a VIP as spec.config.vip.address takes it: an
// IPv4 or IPv6 address, optionally with the controllers' prefix length
// (10.0.0.100/24), that a host can hold and hand over.
func CheckVIPAddress(s string) error {
	var (
		addr   netip.Addr
		prefix netip.Prefix
		err    error
	)
	if strings.Contains(s, "/") {
		if prefix, err = netip.ParsePrefix(s); err != nil {
			return fmt.Errorf("%q is not an IP address with a prefix length (10.0.0.100/24)", s)
		}
		addr = prefix.Addr()
	} else if addr, err = netip.ParseAddr(s); err != nil {
		return fmt.Errorf("%q is not an IP address (10.0.0.100, or 10.0.0.100/24 with the controllers' prefix)", s)
	}
	switch {
	case addr.Zone() != "":
		return fmt.Errorf("%q has an IPv6 zone; write the address alone and set interface", s)
	case addr.IsUnspecified(), addr.IsLoopback(), addr.IsMulticast():
		return fmt.Errorf("%s is an unspecified, loopback or multicast address, which cannot float between hosts", addr)
	}
	if prefix.IsValid() && addr.Is4() && prefix.Bits() <= 30 {
		network := prefix.Masked().Addr()
		broadcast := lastAddr(prefix)
		if addr == network || addr == broadcast {
			return fmt.Errorf("%s is the network or broadcast address of %s; no host can hold it", addr, prefix.Masked())
		}
	}
	return nil
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// validateVIP checks spec.config.vip on its own (the checks against the
// hosts and the distro are the HA rules, ha.go).
func validateVIP(d *document, v *VIP, hosts []Host) {
	const p = "spec.config.vip"
	if v.Address == "" {
		d.errorf(p+".address", "is required: the floating IP address the API answers at (10.0.0.100, or 10.0.0.100/24 with the controllers' prefix)")
	} else if err := CheckVIPAddress(v.Address); err != nil {
		d.errorf(p+".address", "%v", err)
	}
	if v.Interface != "" && !interfaceName.MatchString(v.Interface) {
		d.errorf(p+".interface", "%q is not a network interface name", v.Interface)
	}
	knownProvider := v.Provider == "" || slices.Contains(VIPProviders, v.Provider)
	if !knownProvider {
		d.errorf(p+".provider", "%q is not one of %s", v.Provider, quoteList(VIPProviders))
	}
	if v.WaitTimeout != "" {
		if t, err := time.ParseDuration(v.WaitTimeout); err != nil || t <= 0 {
			d.errorf(p+".waitTimeout", "%q is not a positive duration (3m, 90s)", v.WaitTimeout)
		}
	}
	if v.KubeVIP != nil {
		if knownProvider && v.ProviderName() != VIPKubeVIP {
			d.errorf(p+".kubeVip", "kube-vip settings with provider %s: remove them, or set provider: kube-vip", v.ProviderName())
		}
		validateKubeVIP(d, p+".kubeVip", v.KubeVIP, v.KubeVIPSettings())
	}
	if v.Keepalived != nil {
		if knownProvider && v.ProviderName() != VIPKeepalived {
			d.errorf(p+".keepalived", "keepalived settings with provider %s (the default when provider is unset): remove them, or set provider: keepalived", v.ProviderName())
		}
		validateKeepalived(d, p+".keepalived", v.Keepalived, hosts)
	}
}

// positiveSeconds reports a negative count; 0 is the default.
func positiveSeconds(d *document, path string, n int, unit string) bool {
	if n < 0 {
		d.errorf(path, "%d is not a positive number of %s", n, unit)
		return false
	}
	return true
}

func validateKubeVIP(d *document, p string, k *KubeVIP, eff KubeVIP) {
	if k.Image != "" {
		if _, err := name.ParseReference(k.Image); err != nil {
			d.errorf(p+".image", "%q is not an image reference: %v", k.Image, err)
		}
	}
	ok := positiveSeconds(d, p+".leaseDuration", k.LeaseDuration, "seconds")
	ok = positiveSeconds(d, p+".renewDeadline", k.RenewDeadline, "seconds") && ok
	ok = positiveSeconds(d, p+".retryPeriod", k.RetryPeriod, "seconds") && ok
	if !ok {
		return
	}
	// client-go's leader election refuses anything else, and kube-vip
	// would crash-loop on every controller.
	if err := checkElectionTimings(eff); err != nil {
		d.errorf(p, "%v", err)
	}
}

// checkElectionTimings states client-go's leader election rule, which
// kube-vip runs: leaseDuration > renewDeadline > 1.2 × retryPeriod (its
// jitter factor).
func checkElectionTimings(k KubeVIP) error {
	if k.LeaseDuration > k.RenewDeadline && k.RenewDeadline*5 > k.RetryPeriod*6 {
		return nil
	}
	return fmt.Errorf("kube-vip's leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod; these are %d, %d and %d seconds (defaults filled in)", k.LeaseDuration, k.RenewDeadline, k.RetryPeriod)
}

func validateKeepalived(d *document, p string, k *Keepalived, hosts []Host) {
	if k.RouterID < 0 || k.RouterID > 255 {
		d.errorf(p+".routerId", "%d is not a VRRP virtual router id (1-255)", k.RouterID)
	}
	positiveSeconds(d, p+".advertInterval", k.AdvertInterval, "seconds")
	seen := map[int]int{}
	for i, entry := range k.Priority {
		ep := fmt.Sprintf("%s.priority[%d]", p, i)
		hi, err := controllerNamed(hosts, entry)
		if err != nil {
			d.errorf(ep, "%v", err)
			continue
		}
		if j, dup := seen[hi]; dup {
			d.errorf(ep, "%q is spec.hosts[%d], already listed at %s.priority[%d]", entry, hi, p, j)
			continue
		}
		seen[hi] = i
	}
	if c := k.Check; c != nil {
		positiveSeconds(d, p+".check.interval", c.Interval, "seconds")
		positiveSeconds(d, p+".check.timeout", c.Timeout, "seconds")
		positiveSeconds(d, p+".check.fall", c.Fall, "checks")
		positiveSeconds(d, p+".check.rise", c.Rise, "checks")
	}
}

// controllerNamed finds the controller an entry names, as messages name
// hosts (Host.Name: the hostname, else the address cargoship connects to)
// or by its privateAddress, the ways keepalived's rendering matches them.
func controllerNamed(hosts []Host, entry string) (int, error) {
	var names []string
	for i := range hosts {
		h := &hosts[i]
		if entry != "" && (entry == h.Hostname || entry == h.Address() || entry == h.PrivateAddress) {
			if !h.IsController() {
				return 0, fmt.Errorf("%q is spec.hosts[%d], a %s; only controllers hold the VIP", entry, i, h.Role)
			}
			return i, nil
		}
		if h.IsController() {
			names = append(names, h.Name())
		}
	}
	if len(names) == 0 {
		return 0, errors.New("names no controller")
	}
	return 0, fmt.Errorf("%q names no host; write a controller's hostname or address (%s)", entry, strings.Join(names, ", "))
}
