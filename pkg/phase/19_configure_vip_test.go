package phase

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// `ip -o addr show dev eth0` on a host with one IPv4 and one link-local
// IPv6 network.
const ipAddrEth0 = `2: eth0    inet 10.0.0.11/24 brd 10.0.0.255 scope global eth0\       valid_lft forever preferred_lft forever
2: eth0    inet6 fe80::1/64 scope link \       valid_lft forever preferred_lft forever
`

// A VIP must sit in a network of the interface keepalived puts it on: one
// outside every network is refused, naming the host, the interface and its
// networks; one inside passes; an address the interface only has as a host
// route (the VIP itself, once held) is no network.
func TestTheVIPMustBeInANetworkOfItsInterface(t *testing.T) {
	t.Parallel()
	f := (&hosttest.Fake{Name: "kc0"}).On("ip -o addr show dev eth0", ipAddrEth0+"2: eth0    inet 10.0.9.250/32 scope global eth0\n")
	h := &node.Host{Spec: &v1alpha1.Host{Hostname: "kc0"}, Conn: f}
	ctx := context.Background()
	require.NoError(t, checkVIPSubnet(ctx, h, "eth0", netip.MustParseAddr("10.0.0.250")))
	err := checkVIPSubnet(ctx, h, "eth0", netip.MustParseAddr("10.0.9.250"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kc0")
	assert.Contains(t, err.Error(), "the VIP 10.0.9.250 (spec.config.vip.address) is in no network of eth0 (10.0.0.0/24, fe80::/64, 10.0.9.250/32)")
}

// kubeadm's controlPlaneEndpoint is the VIP: cargoship brings it up with
// the founder's API server, so the cold bootstrap does not ask whether it
// answers before kubeadm init (it cannot).
func TestKubeadmColdBootstrapDoesNotProbeItsOwnVIP(t *testing.T) {
	t.Parallel()
	s, m := coldKubeadm(t)
	s.Cluster.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.100", Provider: v1alpha1.VIPKeepalived}
	require.NoError(t, prepare(context.Background(), NewInitializeControllers(), s))
	assert.Empty(t, m.steps(), "no probe of the VIP before init")

	s.Cluster.Spec.Config.VIP.Address = "10.0.0.99"
	require.Error(t, prepare(context.Background(), NewInitializeControllers(), s), "a load balancer that is not the VIP is still checked")
}
