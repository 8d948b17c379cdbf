package podnet

import (
	"net/http"
	"net/netip"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata holds answers of a real kube-apiserver v1.35.4 with
// kube-controller-manager's node IPAM (testdata/README.md).
func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return b
}

func TestParseNode(t *testing.T) {
	n, err := ParseNode(readTestdata(t, "node.json"))
	require.NoError(t, err)
	assert.Equal(t, Node{
		Name:       "w1",
		PodCIDR:    netip.MustParsePrefix("10.244.1.0/24"),
		InternalIP: netip.MustParseAddr("192.0.2.11"),
	}, n)
}

// A node kube-controller-manager has not reached yet has no pod CIDR.
func TestParseNodeWithoutPodCIDR(t *testing.T) {
	n, err := ParseNode(readTestdata(t, "node-no-podcidr.json"))
	require.NoError(t, err)
	assert.Equal(t, "w3", n.Name)
	assert.False(t, n.PodCIDR.IsValid())
	assert.Equal(t, netip.MustParseAddr("192.0.2.13"), n.InternalIP)
}

func TestParseNodeList(t *testing.T) {
	nodes, err := ParseNodeList(readTestdata(t, "nodelist.json"))
	require.NoError(t, err)
	assert.Equal(t, []Node{
		{Name: "cp1", PodCIDR: netip.MustParsePrefix("10.244.0.0/24"), InternalIP: netip.MustParseAddr("192.0.2.10")},
		{Name: "w1", PodCIDR: netip.MustParsePrefix("10.244.1.0/24"), InternalIP: netip.MustParseAddr("192.0.2.11")},
		{Name: "w2", PodCIDR: netip.MustParsePrefix("10.244.2.0/24"), InternalIP: netip.MustParseAddr("192.0.2.12")},
		{Name: "w3", InternalIP: netip.MustParseAddr("192.0.2.13")},
	}, nodes)
}

// Dual-stack nodes list both families; podnet keeps the IPv4 ones, and
// spec.podCIDR alone (no podCIDRs) is read too.
func TestParseNodeKeepsIPv4(t *testing.T) {
	n, err := ParseNode([]byte(`{"kind":"Node","metadata":{"name":"a"},
		"spec":{"podCIDRs":["fd00:10:244:1::/64","10.244.5.0/24"]},
		"status":{"addresses":[{"type":"Hostname","address":"a"},{"type":"InternalIP","address":"fd00::5"},{"type":"InternalIP","address":"192.0.2.5"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, Node{Name: "a", PodCIDR: netip.MustParsePrefix("10.244.5.0/24"), InternalIP: netip.MustParseAddr("192.0.2.5")}, n)

	n, err = ParseNode([]byte(`{"metadata":{"name":"b"},"spec":{"podCIDR":"10.244.6.0/24"}}`))
	require.NoError(t, err)
	assert.Equal(t, netip.MustParsePrefix("10.244.6.0/24"), n.PodCIDR)
	assert.False(t, n.InternalIP.IsValid())
}

func TestParseNodeErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     `<html>`,
		"no name":      `{"metadata":{}}`,
		"bad pod CIDR": `{"metadata":{"name":"a"},"spec":{"podCIDR":"10.244.1.0"}}`,
		"bad address":  `{"metadata":{"name":"a"},"status":{"addresses":[{"type":"InternalIP","address":"node-a"}]}}`,
	} {
		_, err := ParseNode([]byte(body))
		require.Error(t, err, name)
	}
	// A Status object (what an error answers) is no NodeList.
	_, err := ParseNodeList(readTestdata(t, "status-notfound.json"))
	assert.ErrorContains(t, err, `kind is "Status"`)
}

func TestAPIErrorFromStatus(t *testing.T) {
	err := error(&APIError{Path: "/api/v1/nodes/nope", Code: http.StatusNotFound, Message: statusMessage(readTestdata(t, "status-notfound.json"))})
	assert.Equal(t, `GET /api/v1/nodes/nope: 404 Not Found: NotFound: nodes "nope" not found`, err.Error())
	assert.True(t, IsNotFound(err))
	assert.False(t, IsNotFound(&APIError{Code: http.StatusUnauthorized}))
	assert.Equal(t, "upstream connect error", statusMessage([]byte("upstream connect error\n")))
}
