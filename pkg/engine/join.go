package engine

import (
	"net"
	"strconv"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// JoinAddress is the address nodes join the cluster through: the load
// balancer (or the VIP, when no load balancer is named), except while a cold HA bootstrap brings the first controller
// up. A VIP announced from inside the cluster (kube-vip) does not answer
// until the cluster exists, so until then everyone joins through the
// founder's private address (docs/reference/behaviour.md, "Joining through
// the founder, then the load balancer"). A cluster without a load balancer
// always joins through the founder.
func JoinAddress(c *v1alpha1.Cluster, founder *v1alpha1.Host, vipReachable bool) string {
	if lb := c.Spec.Config.APIAddress(); lb != "" && vipReachable {
		return lb
	}
	return founder.PrivateAddress
}

// ServerURL is https://host:port, with IPv6 addresses bracketed.
func ServerURL(host string, port int) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}
