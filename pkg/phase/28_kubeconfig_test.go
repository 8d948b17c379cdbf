package phase

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testAdminKubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0E=
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
users:
- name: default
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
`

func TestKubeconfigPhaseWritesThePointedKubeconfigOnce(t *testing.T) {
	t.Parallel()
	s, runners := k3sTestState(t)
	runners["c1"].write(t, s.Engine.Paths().Kubeconfig, testAdminKubeconfig)
	out := filepath.Join(t.TempDir(), "kubeconfig-test.yaml")
	s.Options.KubeconfigOut = out
	ctx := context.Background()

	p := &Kubeconfig{}
	require.NoError(t, prepare(ctx, p, s))
	require.True(t, p.ShouldRun())
	plan, err := p.Plan(ctx)
	require.NoError(t, err)
	want := out + " (0600), server https://10.0.0.1:6443"
	assert.Equal(t, []node.Change{{Host: "(local)", What: "write the admin kubeconfig to " + want}}, plan)

	require.NoError(t, p.Run(ctx))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(got), "server: https://10.0.0.1:6443")
	assert.Contains(t, string(got), "client-key-data: S0VZ", "the credentials are kept")
	assert.Equal(t, []node.Change{{Host: "(local)", Phase: p.Title(), What: "wrote the admin kubeconfig to " + want}}, s.Report.Changes())

	require.NoError(t, prepare(ctx, p, s))
	assert.False(t, p.ShouldRun(), "a second run finds the file current")
}

func TestKubeconfigPhaseWithoutARunningController(t *testing.T) {
	t.Parallel()
	s, _ := k3sTestState(t)
	ctx := context.Background()
	p := &Kubeconfig{}
	require.NoError(t, prepare(ctx, p, s), "off: nothing is read")
	assert.False(t, p.ShouldRun())

	s.Options.KubeconfigOut = filepath.Join(t.TempDir(), "k")
	s.Hosts[0].EngineRunning = false
	require.ErrorContains(t, prepare(ctx, p, s), "no controller runs k3s")
	s.Options.DryRun = true
	require.ErrorIs(t, prepare(ctx, p, s), ErrUnassessed)

	s.Hosts[0].EngineRunning = true
	assert.ErrorContains(t, prepare(ctx, p, s), "reading the admin kubeconfig", "c1 has no kubeconfig")
}
