package cluster

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func loadExternal(t *testing.T) *v1alpha1.Cluster {
	t.Helper()
	c, _, err := v1alpha1.LoadClusterFile(filepath.Join("testdata", "inventory-external.yaml"))
	require.NoError(t, err)
	return c
}

func TestExternalInventoryShape(t *testing.T) {
	c := loadExternal(t)
	require.NoError(t, checkSuiteInventory(c))
	assert.Equal(t, counts{Hosts: 3, Controllers: 1, Workers: 2}, countsFor(c))
}

func TestHoldOutJoinHost(t *testing.T) {
	c := loadExternal(t)
	v, err := holdOut(c, "ip-10-0-1-12")
	require.NoError(t, err)
	assert.Equal(t, 2, countsFor(v.Apply).Hosts, "the apply view holds every host but the join host")
	assert.Equal(t, 3, countsFor(v.All).Hosts, "the join view holds all of them")
	for _, h := range v.Apply.Spec.Hosts {
		assert.NotEqual(t, "ip-10-0-1-12", h.Hostname)
	}
	assert.Len(t, c.Spec.Hosts, 3, "holding out must not change the document")
}

func TestHoldOutRefusals(t *testing.T) {
	c := loadExternal(t)
	_, err := holdOut(c, "10.0.1.12")
	require.ErrorContains(t, err, "no host with that hostname")
	one := *c
	one.Spec.Hosts = c.Spec.Hosts[:1]
	_, err = holdOut(&one, "ip-10-0-1-10")
	require.ErrorContains(t, err, "only host")
	v, err := holdOut(c, "")
	require.NoError(t, err)
	assert.Empty(t, v.Join)
}

func TestSuiteInventoryRequirements(t *testing.T) {
	c := loadExternal(t)
	noAddr := *c
	noAddr.Spec.Hosts = append([]v1alpha1.Host(nil), c.Spec.Hosts...)
	noAddr.Spec.Hosts[1].PrivateAddress = ""
	require.ErrorContains(t, checkSuiteInventory(&noAddr), "privateAddress")
	noCtl := *c
	noCtl.Spec.Hosts = append([]v1alpha1.Host(nil), c.Spec.Hosts[1:]...)
	require.ErrorContains(t, checkSuiteInventory(&noCtl), "no host with a controller role")
}
