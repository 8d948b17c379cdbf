package cluster

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain refuses a run whose distro knob names no engine the walks can
// install, before any test starts (docs/e2e.md, Knobs), and ends a run by
// naming its slowest steps.
func TestMain(m *testing.M) {
	if _, err := suiteDistro(); err != nil {
		fmt.Fprintf(os.Stderr, "test/e2e/cluster: %v\n", err)
		os.Exit(2)
	}
	code := m.Run()
	steps.Report(os.Stdout, slowestShown)
	os.Exit(code)
}

// The distro knob picks the test package's engine, k3s when unset; upstream
// and anything else are refused, upstream saying why it cannot run.
func TestSuiteDistro(t *testing.T) {
	for _, tc := range []struct{ value, name string }{{"", "k3s"}, {"k3s", "k3s"}, {"rke2", "rke2"}} {
		t.Setenv(envDistro, tc.value)
		d, err := suiteDistro()
		require.NoError(t, err, tc.value)
		assert.Equal(t, tc.name, d.Name, tc.value)
		assert.Equal(t, tc.name, d.Engine().Name(), tc.value)
		assert.Contains(t, d.Built, "+"+tc.name, "%s: the test engine reports a %s release", tc.value, tc.name)
	}
	t.Setenv(envDistro, "rke2")
	d, _ := suiteDistro()
	assert.Equal(t, 9345, d.Engine().JoinPort(), "rke2 joins on its supervisor port")
	assert.Equal(t, "/etc/rancher/rke2/config.yaml", d.Engine().Paths().Config)

	t.Setenv(envDistro, "upstream")
	_, err := suiteDistro()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot run yet")
	assert.Contains(t, err.Error(), "real Kubernetes built from source")

	t.Setenv(envDistro, "k8s")
	_, err = suiteDistro()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"k8s" is not a distro`)
}
