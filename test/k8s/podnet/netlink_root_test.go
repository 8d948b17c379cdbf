package podnet

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

var netnsCount atomic.Int32

// netnsForTest is a fresh network namespace with a veth pair whose eth0
// has 192.0.2.10/24 (a documentation range; nothing leaves the
// namespace), standing in for a node's link on the shared segment. It is
// deleted when the test ends.
func netnsForTest(t *testing.T) (string, netns.NsHandle) {
	t.Helper()
	name := fmt.Sprintf("podnet-test-%d-%d", os.Getpid(), netnsCount.Add(1))
	ip(t, "netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	ip(t, "-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", "eth1")
	ip(t, "-n", name, "addr", "add", "192.0.2.10/24", "dev", "eth0")
	ip(t, "-n", name, "link", "set", "eth0", "up")
	ip(t, "-n", name, "link", "set", "eth1", "up")
	ns, err := netns.GetFromName(name)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ns.Close() })
	return name, ns
}

func ip(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// ipRoutes is what iproute2 shows of the namespace's routes with podnet's
// protocol: a reader independent of podnet's own List.
func ipRoutes(t *testing.T, ns string, proto string) []string {
	t.Helper()
	var rs []struct {
		Dst     string `json:"dst"`
		Gateway string `json:"gateway"`
		Dev     string `json:"dev"`
	}
	require.NoError(t, json.Unmarshal([]byte(ip(t, "-n", ns, "-j", "route", "show", "proto", proto)), &rs))
	var out []string
	for _, r := range rs {
		out = append(out, r.Dst+" via "+r.Gateway+" dev "+r.Dev)
	}
	slices.Sort(out)
	return out
}

// Routes sets a route set in a namespace, reads it back, moves, adds and
// deletes routes as nodes change, and leaves alone routes it did not
// make.
func TestRootRoutesSyncInNetns(t *testing.T) {
	testtier.Root(t, "creates a network namespace and changes its routes")
	name, ns := netnsForTest(t)
	h, err := netlink.NewHandleAt(ns)
	require.NoError(t, err)
	defer h.Close()
	r := NewRoutes(h)
	// Someone else's route through the same link.
	ip(t, "-n", name, "route", "add", "10.99.0.0/24", "via", "192.0.2.99", "proto", "static")

	a := route("10.244.1.0/24", "192.0.2.11")
	b := route("10.244.2.0/24", "192.0.2.12")
	d, err := r.Sync([]Route{b, a})
	require.NoError(t, err)
	assert.Equal(t, []Route{a, b}, d.Set)
	assert.Empty(t, d.Del)
	got, err := r.List()
	require.NoError(t, err)
	assert.ElementsMatch(t, []Route{a, b}, got)
	assert.Equal(t, []string{"10.244.1.0/24 via 192.0.2.11 dev eth0", "10.244.2.0/24 via 192.0.2.12 dev eth0"}, ipRoutes(t, name, "78"))

	// Nothing to do the second time.
	d, err = r.Sync([]Route{a, b})
	require.NoError(t, err)
	assert.True(t, d.Empty())

	// a's node left, b's moved, c's joined.
	bMoved := route("10.244.2.0/24", "192.0.2.22")
	c := route("10.244.3.0/24", "192.0.2.13")
	d, err = r.Sync([]Route{bMoved, c})
	require.NoError(t, err)
	assert.Equal(t, []Route{bMoved, c}, d.Set)
	assert.Equal(t, []Route{a}, d.Del)
	assert.Equal(t, []string{"10.244.2.0/24 via 192.0.2.22 dev eth0", "10.244.3.0/24 via 192.0.2.13 dev eth0"}, ipRoutes(t, name, "78"))

	// A gateway on no link of the namespace is refused by the kernel; the
	// other changes are made all the same.
	far := route("10.244.4.0/24", "198.51.100.1")
	d, err = r.Sync([]Route{c, far})
	require.ErrorContains(t, err, "set route 10.244.4.0/24 via 198.51.100.1")
	assert.Empty(t, d.Set)
	assert.Equal(t, []Route{bMoved}, d.Del)
	assert.Equal(t, []string{"10.244.3.0/24 via 192.0.2.13 dev eth0"}, ipRoutes(t, name, "78"))

	// Every node gone: podnet's routes go, the other one stays.
	d, err = r.Sync(nil)
	require.NoError(t, err)
	assert.Equal(t, []Route{c}, d.Del)
	got, err = r.List()
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, []string{"10.99.0.0/24 via 192.0.2.99 dev eth0"}, ipRoutes(t, name, "static"))
}

// EnsureIPForward turns forwarding on in the namespace of the calling
// thread (a fresh namespace starts with it off) and only there.
func TestRootEnsureIPForwardInNetns(t *testing.T) {
	testtier.Root(t, "creates a network namespace and sets a sysctl in it")
	name, ns := netnsForTest(t)
	before, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	require.NoError(t, err)

	type result struct {
		first, second bool
		err           error
	}
	done := make(chan result)
	go func() {
		// The thread stays locked and so ends with the goroutine: it
		// never goes back to the pool in the other namespace.
		runtime.LockOSThread()
		var res result
		if res.err = netns.Set(ns); res.err == nil {
			if res.first, res.err = EnsureIPForward("/proc"); res.err == nil {
				res.second, res.err = EnsureIPForward("/proc")
			}
		}
		done <- res
	}()
	res := <-done
	require.NoError(t, res.err)
	assert.True(t, res.first, "a fresh namespace forwards nothing")
	assert.False(t, res.second, "already on")
	assert.Equal(t, "1", strings.TrimSpace(ip(t, "netns", "exec", name, "cat", "/proc/sys/net/ipv4/ip_forward")))
	after, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the test's own namespace is untouched")
}
