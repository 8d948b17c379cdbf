package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// In a dry run the upload phases queue the package files that would wait
// and list only their uploads; Install staged files lists the installs it
// would make itself, and only on the hosts no earlier phase takes: not a
// host whose engine does not run (Initialize installs it) nor one that
// awaits its upgrade (the upgrade phases do), so a whole dry run names
// each installation once (docs/apply.md, "Where the staging half ends").
func TestInstallStagedPlansOnlyTheHostsItReaches(t *testing.T) {
	s, _ := k3sTestState(t, "w1", "w2")
	const deb = "/var/lib/cargoship/debs/engine.deb"
	byName := map[string]*node.Host{}
	for _, h := range s.Hosts {
		byName[h.Spec.Hostname] = h
		h.OS = hostos.OS{Family: v1alpha1.FamilyDebian}
		h.Packages = []string{deb} // not on the host: missing, so to install
	}
	byName["c1"].Staged = []node.StagedFile{{Staged: "/usr/local/bin/.k3s.cargoship-staged", Target: "/usr/local/bin/k3s"}}
	byName["w1"].EngineRunning, byName["w1"].EngineVersion = false, "" // Initialize's
	byName["w2"].EngineVersion = "1.35.2+k3s1"                         // awaits its upgrade

	p := &InstallStaged{}
	Bind(p, s)
	require.True(t, p.ShouldRun())
	changes, err := p.Plan(context.Background())
	require.NoError(t, err)
	var got []string
	for _, c := range changes {
		got = append(got, c.Host+": "+c.What)
	}
	assert.Equal(t, []string{"c1: install /usr/local/bin/k3s", "c1: install package engine.deb"}, got)
}
