package v1alpha1

import (
	"strings"
	"testing"
)

func TestCheckVIPAddress(t *testing.T) {
	for _, ok := range []string{"10.0.0.100", "10.0.0.100/24", "10.0.0.100/32", "fd00::100", "fd00::100/64", "192.168.1.1/31"} {
		if err := CheckVIPAddress(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, why := range map[string]string{
		"":                 "not an IP address",
		"vip.example.com":  "not an IP address",
		"10.0.0.100/33":    "prefix length",
		"10.0.0.100/":      "prefix length",
		"10.0.0.0/24":      "network or broadcast",
		"10.0.0.255/24":    "network or broadcast",
		"fe80::1%eth0":     "zone",
		"0.0.0.0":          "unspecified",
		"127.0.0.5":        "loopback",
		"::1":              "loopback",
		"224.0.0.18":       "multicast",
		"10.0.0.100 ":      "not an IP address",
		"10.0.0.100/24/24": "prefix length",
	} {
		err := CheckVIPAddress(bad)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CheckVIPAddress(%q) = %v, want an error saying %q", bad, err, why)
		}
	}
}

func TestCheckElectionTimings(t *testing.T) {
	for _, k := range []KubeVIP{{LeaseDuration: 5, RenewDeadline: 3, RetryPeriod: 1}, {LeaseDuration: 15, RenewDeadline: 10, RetryPeriod: 2}, {LeaseDuration: 7, RenewDeadline: 6, RetryPeriod: 4}} {
		if err := checkElectionTimings(k); err != nil {
			t.Errorf("%+v: %v", k, err)
		}
	}
	// client-go also wants renewDeadline > 1.2 × retryPeriod: 6 > 6 fails.
	for _, k := range []KubeVIP{{LeaseDuration: 3, RenewDeadline: 3, RetryPeriod: 1}, {LeaseDuration: 5, RenewDeadline: 2, RetryPeriod: 2}, {LeaseDuration: 9, RenewDeadline: 6, RetryPeriod: 5}, {LeaseDuration: 2, RenewDeadline: 3, RetryPeriod: 1}} {
		if err := checkElectionTimings(k); err == nil {
			t.Errorf("%+v accepted", k)
		}
	}
}

// vipDoc is a three-controller inventory with a worker whose
// spec.config.vip is body, indented under vip:.
func vipDoc(config, vip string) string {
	return "kind: Cluster\nmetadata: {name: lab}\nspec:\n  config:\n" + config + "    vip:\n" + vip + `  hosts:
    - {hostname: c1, role: controller, privateAddress: 10.0.0.11, ssh: {address: 10.0.0.11}}
    - {hostname: c2, role: controller, privateAddress: 10.0.0.12, ssh: {address: 10.0.0.12}}
    - {role: controller+worker, privateAddress: 10.0.0.13, ssh: {address: 10.0.0.13}}
    - {hostname: w1, role: worker, privateAddress: 10.0.0.21, ssh: {address: 10.0.0.21}}
`
}

func TestVIPFields(t *testing.T) {
	for _, tc := range []struct {
		name, vip string
		want      []string // "path: message substring"; none means it loads without a finding
	}{
		{"address only", "      address: 10.0.0.100\n", nil},
		{"with prefix", "      address: 10.0.0.100/24\n      interface: eth1\n      waitTimeout: 90s\n", nil},
		{"every kube-vip field", "      address: 10.0.0.100\n      provider: kube-vip\n      kubeVip: {image: ghcr.io/kube-vip/kube-vip:v0.9.1, leaseDuration: 15, renewDeadline: 10, retryPeriod: 2}\n", nil},
		{"every keepalived field", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived:\n        routerId: 255\n        priority: [c2, 10.0.0.13, c1]\n        advertInterval: 2\n        check: {interval: 3, timeout: 2, fall: 3, rise: 2}\n", nil},
		{"no address", "      interface: eth1\n", []string{"spec.config.vip.address: is required"}},
		{"not an address", "      address: vip.example.com\n", []string{"spec.config.vip.address: \"vip.example.com\" is not an IP address"}},
		{"interface", "      address: 10.0.0.100\n      interface: \"eth0; reboot\"\n", []string{"spec.config.vip.interface: \"eth0; reboot\" is not a network interface name"}},
		{"provider", "      address: 10.0.0.100\n      provider: vrrp\n", []string{`spec.config.vip.provider: "vrrp" is not one of "kube-vip", "keepalived"`}},
		{"wait timeout", "      address: 10.0.0.100\n      waitTimeout: 3\n", []string{`spec.config.vip.waitTimeout: "3" is not a positive duration`}},
		{"negative wait timeout", "      address: 10.0.0.100\n      waitTimeout: -1m\n", []string{`spec.config.vip.waitTimeout: "-1m" is not a positive duration`}},
		{"kube-vip negative", "      address: 10.0.0.100\n      kubeVip: {leaseDuration: -5}\n", []string{"spec.config.vip.kubeVip.leaseDuration: -5 is not a positive number of seconds"}},
		{"kube-vip image", "      address: 10.0.0.100\n      kubeVip: {image: \"Kube VIP\"}\n", []string{`spec.config.vip.kubeVip.image: "Kube VIP" is not an image reference`}},
		{"kube-vip order against a default", "      address: 10.0.0.100\n      kubeVip: {leaseDuration: 3}\n", []string{"spec.config.vip.kubeVip: kube-vip's leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod; these are 3, 3 and 1 seconds"}},
		{"kube-vip retry too long", "      address: 10.0.0.100\n      kubeVip: {leaseDuration: 10, renewDeadline: 5, retryPeriod: 5}\n", []string{"spec.config.vip.kubeVip: kube-vip's leader election needs"}},
		{"keepalived settings for kube-vip", "      address: 10.0.0.100\n      keepalived: {routerId: 7}\n", []string{"spec.config.vip.keepalived: keepalived settings with provider kube-vip (the default when provider is unset)"}},
		{"kube-vip settings for keepalived", "      address: 10.0.0.100\n      provider: keepalived\n      kubeVip: {leaseDuration: 15}\n", []string{"spec.config.vip.kubeVip: kube-vip settings with provider keepalived"}},
		{"router id", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {routerId: 256}\n", []string{"spec.config.vip.keepalived.routerId: 256 is not a VRRP virtual router id (1-255)"}},
		{"negative router id", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {routerId: -1}\n", []string{"spec.config.vip.keepalived.routerId: -1 is not a VRRP virtual router id"}},
		{"advert interval", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {advertInterval: -1}\n", []string{"spec.config.vip.keepalived.advertInterval: -1 is not a positive number of seconds"}},
		{"priority names a worker", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {priority: [c1, w1]}\n", []string{`spec.config.vip.keepalived.priority[1]: "w1" is spec.hosts[3], a worker; only controllers hold the VIP`}},
		{"priority names nothing", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {priority: [c9]}\n", []string{`spec.config.vip.keepalived.priority[0]: "c9" names no host; write a controller's hostname or address (c1, c2, 10.0.0.13)`}},
		{"priority twice, by name and address", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {priority: [c1, 10.0.0.11]}\n", []string{`spec.config.vip.keepalived.priority[1]: "10.0.0.11" is spec.hosts[0], already listed at spec.config.vip.keepalived.priority[0]`}},
		{"check", "      address: 10.0.0.100\n      provider: keepalived\n      keepalived: {check: {interval: -2, timeout: -1, fall: -3, rise: -4}}\n", []string{
			"spec.config.vip.keepalived.check.interval: -2 is not a positive number of seconds",
			"spec.config.vip.keepalived.check.timeout: -1 is not a positive number of seconds",
			"spec.config.vip.keepalived.check.fall: -3 is not a positive number of checks",
			"spec.config.vip.keepalived.check.rise: -4 is not a positive number of checks",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fs, _ := ParseCluster("c.yaml", []byte(vipDoc("", tc.vip)))
			var got []string
			for _, f := range fs {
				got = append(got, f.Path+": "+f.Message)
				if f.Line == 0 {
					t.Errorf("%s has no line", f)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(got), len(tc.want), fs)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("finding %d is %q, want %q", i, got[i], w)
				}
			}
		})
	}
}

// TestVIPStandsInForLoadbalancer: with a VIP the loadbalancer may be left
// out, and defaults make it the VIP's address; validating the defaulted
// inventory again finds nothing new, so validation before or after
// defaults agrees. Without either, the error names both.
func TestVIPStandsInForLoadbalancer(t *testing.T) {
	c, fs, err := ParseCluster("c.yaml", []byte(vipDoc("", "      address: 10.0.0.100/24\n")))
	if err != nil || len(fs) > 0 {
		t.Fatalf("a VIP and no loadbalancer: %v\n%s", err, fs)
	}
	if got := c.Spec.Config.Loadbalancer; got != "10.0.0.100" {
		t.Errorf("loadbalancer defaulted to %q, want the VIP's address 10.0.0.100", got)
	}
	if got := c.Spec.Config.APIAddress(); got != "10.0.0.100" {
		t.Errorf("APIAddress() = %q", got)
	}
	again := &document{file: "c.yaml"}
	validateCluster(again, c)
	if len(again.findings) > 0 {
		t.Errorf("the defaulted inventory validates differently:\n%s", again.findings)
	}
	c, _, err = ParseCluster("c.yaml", []byte(vipDoc("    loadbalancer: api.example.com\n", "      address: 10.0.0.100\n")))
	if err != nil || c.Spec.Config.Loadbalancer != "api.example.com" {
		t.Errorf("a loadbalancer with a VIP is kept: %v %v", err, c)
	}
	_, fs, err = ParseCluster("c.yaml", []byte("kind: Cluster\nmetadata: {name: lab}\nspec:\n  config: {}\n  hosts:\n    - {role: single, localhost: {enabled: true}}\n"))
	if err == nil || len(fs) != 1 || fs[0].Path != "spec.config.loadbalancer" || !strings.Contains(fs[0].Message, "is required unless spec.config.vip is set") {
		t.Errorf("neither loadbalancer nor vip: %v", fs)
	}
}
