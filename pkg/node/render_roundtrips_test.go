package node

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
)

// TestConfigureEngineAsksAConvergedHostOnce: writing engine files a host
// already holds asks it once for all of them, and the cluster token's
// two places on the leader are read in one round trip too. The counts
// are the host's own record of commands, through a real shell.
func TestConfigureEngineAsksAConvergedHostOnce(t *testing.T) {
	r, _ := hostRoot(t)
	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0", Role: v1alpha1.RoleController}, Conn: r}
	s := &Fleet{Engine: eng, Hosts: Hosts{h}, Report: &Report{}}
	rendered := engine.Rendered{Files: []engine.File{
		{Path: eng.Paths().Config, Content: []byte("server: https://10.0.0.1:6443\n"), Mode: 0o600},
		{Path: "/etc/rancher/k3s/registries.yaml", Content: []byte("mirrors: {}\n"), Mode: 0o600},
		{Path: "/var/lib/rancher/k3s/server/audit.yaml", Content: []byte("kind: Policy\n"), Mode: 0o600},
	}}
	ctx := context.Background()
	require.NoError(t, s.WriteRendered(ctx, h, "Configure engine", rendered))
	require.Len(t, s.Report.Changes(), 3, "the first write")
	before := len(r.Calls())

	require.NoError(t, s.WriteRendered(ctx, h, "Configure engine", rendered))
	assert.Len(t, r.Calls(), before+1, "a converged host asked more than once")
	assert.Len(t, s.Report.Changes(), 3, "nothing more changed")
	assert.Equal(t, "10.0.0.1", h.JoinsThrough)

	before = len(r.Calls())
	token, err := s.ReadClusterToken(ctx)
	require.NoError(t, err)
	assert.Empty(t, token)
	assert.Len(t, r.Calls(), before+1, "the token's places asked apart")
}
