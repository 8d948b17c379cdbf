package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// resetFleet is c0..c2 controllers and w0, w1 workers, every engine
// running, each host connected.
func resetFleet(controllers, workers int) Hosts {
	var hs Hosts
	add := func(name, role, net string) {
		h := &Host{Spec: &v1alpha1.Host{Hostname: name, Role: role, SSH: &v1alpha1.SSH{Address: net + name[1:]}}}
		h.Conn, h.EngineRunning, h.EngineVersion = &hosttest.Fake{}, true, "v1.35.3+k3s1"
		hs = append(hs, h)
	}
	for i := range controllers {
		add("c"+string(rune('0'+i)), v1alpha1.RoleController, "10.0.0.")
	}
	for i := range workers {
		add("w"+string(rune('0'+i)), v1alpha1.RoleWorker, "10.0.1.")
	}
	return hs
}

func TestPlanResetWholeClusterWorkersFirst(t *testing.T) {
	hs := resetFleet(2, 2)
	for _, names := range [][]string{nil, {"c0", "c1", "w0", "w1"}} {
		p, err := PlanReset(hs, names)
		require.NoError(t, err)
		assert.True(t, p.Whole)
		assert.Equal(t, "w0, w1, c0, c1", p.Targets.Names())
		assert.Empty(t, p.Survivors)
		assert.Nil(t, p.Through)
	}
}

func TestPlanResetSubsetGoesThroughAStayingController(t *testing.T) {
	hs := resetFleet(3, 2)
	p, err := PlanReset(hs, []string{"c0", "w1"})
	require.NoError(t, err)
	assert.False(t, p.Whole)
	assert.Equal(t, "w1, c0", p.Targets.Names(), "workers first")
	assert.Equal(t, "c1, c2, w0", p.Survivors.Names())
	assert.Equal(t, "c1", p.Through.String(), "never the controller being removed")
	assert.Equal(t, p.Through, p.NewFirst)

	p, err = PlanReset(hs, []string{"10.0.1.1"})
	require.NoError(t, err, "a host is named by its address too")
	assert.Equal(t, "w1", p.Targets.Names())
}

func TestPlanResetRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		hs      Hosts
		targets []string
		want    string
	}{
		"unknown target":             {resetFleet(1, 1), []string{"w9"}, `no host "w9" in the inventory (its hosts: c0, w0)`},
		"two running controllers":    {resetFleet(3, 1), []string{"c0", "c1"}, "names 2 running controllers (c0, c1): remove one controller per run"},
		"every controller, keep one": {resetFleet(1, 2), []string{"c0"}, "names every running controller (c0) while w0, w1 stay"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PlanReset(tc.hs, tc.targets)
			require.ErrorContains(t, err, tc.want)
		})
	}

	hs := resetFleet(2, 1)
	hs[1].EngineRunning = false // c1 is installed but down
	_, err := PlanReset(hs, []string{"c0"})
	require.ErrorContains(t, err, "names every running controller (c0) while c1, w0 stay")

	hs = resetFleet(1, 2)
	hs[0].EngineRunning = false
	_, err = PlanReset(hs, []string{"w0"})
	require.ErrorContains(t, err, "no staying controller runs the engine to drain and delete w0 through")

	hs[1].EngineRunning, hs[1].EngineVersion = false, ""
	p, err := PlanReset(hs, []string{"w0"})
	require.NoError(t, err, "a host with no engine needs no controller to leave")
	assert.Nil(t, p.Through)
}

// A controller put back after a reset is listed first again but joined
// through the survivor that became first: it must not take the lead back,
// or the next apply would re-render both as each other's joiner.
func TestLeaderIsTheRunningControllerThatJoinsThroughNone(t *testing.T) {
	hs := resetFleet(3, 1)
	hs[0].JoinsThrough, hs[2].JoinsThrough = "10.0.0.1", "10.0.0.1" // c0 and c2 joined through c1
	s := &Fleet{Hosts: hs}
	assert.Equal(t, "c1", s.Leader().String())

	s.Leave(Hosts{hs[1]})
	assert.Equal(t, "c0", s.Leader().String(), "a leaving controller never leads: the first running one does")
	assert.Equal(t, "c0", s.KubectlHost().String())

	for _, h := range hs {
		h.EngineRunning = false
	}
	assert.Equal(t, "c0", s.Leader().String(), "cold: the inventory's first staying controller")
}
