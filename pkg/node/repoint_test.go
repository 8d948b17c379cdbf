package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
)

// repointFleet is c0 (the first server), c1, c2 and w0, each joined
// through c0, every engine running, each host's files under its own root.
func repointFleet(t *testing.T) (*Fleet, map[string]string) {
	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	s := &Fleet{Engine: eng, Report: &Report{}}
	roots := map[string]string{}
	for i, name := range []string{"c0", "c1", "c2", "w0"} {
		role := v1alpha1.RoleController
		if name == "w0" {
			role = v1alpha1.RoleWorker
		}
		r, root := hostRoot(t)
		addr := "10.0.0.1" + string(rune('0'+i))
		h := &Host{Spec: &v1alpha1.Host{Hostname: name, Role: role, PrivateAddress: addr, SSH: &v1alpha1.SSH{Address: addr}},
			Conn: r, EngineRunning: true, EngineVersion: "v1.35.3+k3s1"}
		cfg := "node-name: " + name + "\n"
		if name != "c0" {
			h.JoinsThrough = "10.0.0.10"
			cfg += "server: https://10.0.0.10:6443\n"
		} else {
			cfg = "cluster-init: true\n" + cfg
		}
		if role == v1alpha1.RoleController {
			cfg += "tls-san:\n  - c0\n"
		}
		p := filepath.Join(root, eng.Paths().Config)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(cfg), 0o600))
		s.Hosts = append(s.Hosts, h)
		roots[name] = root
	}
	return s, roots
}

func TestPlanRepointWhenTheFirstServerLeaves(t *testing.T) {
	s, _ := repointFleet(t)
	plan, err := PlanReset(s.Hosts, []string{"c0"})
	require.NoError(t, err)
	assert.True(t, plan.FirstLeaves)
	rps, err := s.PlanRepoint(context.Background(), plan)
	require.NoError(t, err)
	require.Len(t, rps, 3)
	assert.Equal(t, "c1", rps[0].Host.String(), "the new first server first")
	assert.Empty(t, rps[0].Join)
	assert.Equal(t, "cluster-init: true\nnode-name: c1\ntls-san:\n  - c0\n", string(rps[0].Config))
	for _, r := range rps[1:] {
		assert.Equal(t, "10.0.0.11", r.Join, r.Host.String())
		assert.Equal(t, "10.0.0.11", engine.ServerOf(r.Config), r.Host.String())
	}
}

func TestPlanRepointLeavesNodesThatNameNoRemovedHost(t *testing.T) {
	s, _ := repointFleet(t)
	for _, target := range []string{"w0", "c2"} {
		plan, err := PlanReset(s.Hosts, []string{target})
		require.NoError(t, err)
		rps, err := s.PlanRepoint(context.Background(), plan)
		require.NoError(t, err)
		assert.Empty(t, rps, "removing %s repoints nobody", target)
	}
	whole, err := PlanReset(s.Hosts, nil)
	require.NoError(t, err)
	rps, err := s.PlanRepoint(context.Background(), whole)
	require.NoError(t, err)
	assert.Empty(t, rps, "a whole reset leaves no survivor to repoint")
}
