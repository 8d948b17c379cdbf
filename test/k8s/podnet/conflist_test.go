package podnet

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conflist for a node's pod CIDR is the bridge on cni0 as the pods'
// gateway with host-local over that CIDR, then portmap, in CNI 1.0.0; a
// host address inside the CIDR is taken as its network.
func TestConflistForPodCIDR(t *testing.T) {
	b, err := Conflist(netip.MustParsePrefix("10.244.1.7/24"))
	require.NoError(t, err)
	golden, err := os.ReadFile("testdata/10-podnet.conflist")
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(b))

	var c struct {
		CNIVersion string           `json:"cniVersion"`
		Name       string           `json:"name"`
		Plugins    []map[string]any `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(b, &c))
	assert.Equal(t, "1.0.0", c.CNIVersion)
	assert.Equal(t, "podnet", c.Name)
	require.Len(t, c.Plugins, 2)
	br := c.Plugins[0]
	assert.Equal(t, "bridge", br["type"])
	assert.Equal(t, "cni0", br["bridge"])
	assert.Equal(t, true, br["isGateway"])
	assert.Equal(t, true, br["ipMasq"])
	ipam, ok := br["ipam"].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, "host-local", ipam["type"])
	assert.Equal(t, []any{[]any{map[string]any{"subnet": "10.244.1.0/24"}}}, ipam["ranges"])
	assert.Equal(t, []any{map[string]any{"dst": "0.0.0.0/0"}}, ipam["routes"])
	assert.Equal(t, "portmap", c.Plugins[1]["type"])
	assert.Equal(t, map[string]any{"portMappings": true}, c.Plugins[1]["capabilities"])
}

func TestConflistRefusesWhatIsNoIPv4PodCIDR(t *testing.T) {
	for _, p := range []netip.Prefix{{}, netip.MustParsePrefix("fd00:10:244::/64"), netip.MustParsePrefix("10.244.1.0/31")} {
		_, err := Conflist(p)
		require.Error(t, err, p.String())
	}
	_, err := Conflist(netip.MustParsePrefix("10.244.1.0/30"))
	assert.NoError(t, err)
}

// The conflist lands whole under its name, is left alone when the bytes
// are the same, is replaced when they are not, and no temporary file is
// left behind.
func TestWriteConflist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "net.d")
	a, err := Conflist(netip.MustParsePrefix("10.244.1.0/24"))
	require.NoError(t, err)
	b, err := Conflist(netip.MustParsePrefix("10.244.2.0/24"))
	require.NoError(t, err)

	changed, err := WriteConflist(dir, a)
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = WriteConflist(dir, a)
	require.NoError(t, err)
	assert.False(t, changed)
	changed, err = WriteConflist(dir, b)
	require.NoError(t, err)
	assert.True(t, changed)

	got, err := os.ReadFile(filepath.Join(dir, ConflistName))
	require.NoError(t, err)
	assert.Equal(t, b, got)
	fi, err := os.Stat(filepath.Join(dir, ConflistName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, ConflistName, entries[0].Name())
}
