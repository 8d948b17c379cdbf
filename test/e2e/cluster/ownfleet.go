package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// ownFleet is a walk with a container fleet of its own (three controllers,
// a host to power off), brought up fresh and torn down after unless
// CARGOSHIP_E2E_KEEP_FLEET is set (e2eutil.StartSuiteFleet). It skips, saying why, where such a walk
// cannot run: a stage-only suite, another backend, no root. The world's
// views are the fleet's inventory after edit.
type ownFleet struct {
	w      *world
	prov   *container.Container
	fleet  *fleet.Fleet
	ctx    context.Context
	distro e2eutil.Distro
}

func newOwnFleet(t *testing.T, name string, spec fleet.Spec, timeout time.Duration, edit func(*v1alpha1.Cluster, *fleet.Fleet)) *ownFleet {
	t.Helper()
	distro, err := suiteDistro()
	require.NoError(t, err)
	stage, err := stageOnly()
	require.NoError(t, err)
	if stage {
		t.Skipf("%s is set: this walk needs a running engine", envStageOnly)
	}
	if backendName() != backendContainer {
		t.Skipf("%s=%s: this walk brings up a container fleet of its own; run the inventory backend's walks instead", envBackend, backendName())
	}
	if os.Geteuid() != 0 {
		t.Skip("the container fleet needs root: run as root, as CI does")
	}
	w := &world{backend: backendContainer, distro: distro, log: testLogger(t)}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	spec.Name = name
	sf := e2eutil.StartSuiteFleet(ctx, t, spec)
	f := sf.Wait(t)
	w.fleet, w.knownHosts = f, f.KnownHostsPath
	c, _, err := v1alpha1.LoadClusterFile(f.InventoryPath)
	require.NoError(t, err)
	if edit != nil {
		edit(c, f)
	}
	w.setViews(t, c, "")
	return &ownFleet{w: w, prov: sf.Provider, fleet: f, ctx: ctx, distro: distro}
}
