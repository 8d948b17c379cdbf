package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// coldKubeadm is a kubeadm inventory no host of which runs yet.
func coldKubeadm(t *testing.T) (*node.Fleet, *kubeadmFleet) {
	t.Helper()
	s, m := newKubeadmFleet(t, "1.35.3", "1.35.3", 2, 1)
	for _, h := range s.Hosts {
		h.EngineRunning, h.EngineVersion = false, ""
	}
	return s, m
}

// kubeadm names the load balancer as controlPlaneEndpoint from init on:
// one that does not answer yet is refused before kubeadm init, naming the
// endpoint, the founder and the way out.
func TestKubeadmColdBootstrapNeedsItsEndpointAnswering(t *testing.T) {
	t.Parallel()
	s, m := coldKubeadm(t)
	ctx := context.Background()
	p := NewInitializeControllers()
	err := prepare(ctx, p, s)
	require.Error(t, err)
	assert.Equal(t, "the control-plane endpoint 10.0.0.100:6443 (spec.config.loadbalancer) does not answer from the founder c1 (10.0.0.1): no answer in 3s. "+
		"kubeadm init writes every kubeconfig against it and joining nodes bootstrap through it, so no node could join. "+
		"Point spec.config.loadbalancer at a load balancer that already forwards port 6443 to 10.0.0.1, or leave it unset to use c1's own address", err.Error())
	assert.Equal(t, []string{"c1: probe 10.0.0.100:6443"}, m.steps(), "only the probe, from the founder")

	s.Options.DryRun = true
	require.Error(t, prepare(ctx, p, s), "a dry run says so too")
	s.Options.DryRun = false
	m.steps()

	for _, answer := range []string{"open", "refused"} {
		m.answering["10.0.0.100"] = answer
		require.NoError(t, prepare(ctx, p, s), "a load balancer that answers: %s", answer)
		assert.Equal(t, []string{"c1: probe 10.0.0.100:6443"}, m.steps())
	}

	delete(m.answering, "10.0.0.100")
	for _, own := range []string{"10.0.0.1", "c1", ""} {
		s.Cluster.Spec.Config.Loadbalancer = own
		require.NoError(t, prepare(ctx, p, s), "endpoint %q: the founder's own address", own)
		assert.Empty(t, m.steps(), "nothing to probe")
	}
	up := s.Engine.(engine.FixedEndpoint)
	assert.Equal(t, "10.0.0.1", up.ControlPlaneEndpoint(s.EffectiveCluster(), s.Hosts[0].EffectiveSpec()), "unset: the founder's address, as the kubeadm config says")
}

// Once the cluster runs, or for k3s and rke2 (which join through the
// founder until the VIP answers), there is nothing to refuse.
func TestOnlyAColdKubeadmBootstrapChecksTheEndpoint(t *testing.T) {
	t.Parallel()
	s, m := coldKubeadm(t)
	s.Hosts[0].EngineRunning = true // c1 founded it; c2 joins
	require.NoError(t, prepare(context.Background(), NewInitializeControllers(), s))
	assert.Empty(t, m.steps())

	s, m = coldKubeadm(t)
	s.Distro.Spec.Type = v1alpha1.EngineK3s
	k3s, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	s.Engine = k3s
	require.NoError(t, prepare(context.Background(), NewInitializeControllers(), s))
	assert.Empty(t, m.steps())
}
