package node

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// installOne installs one staged k3s binary on a host whose SELinux fact
// is mode and returns the commands it ran.
func installOne(t *testing.T, mode string) []string {
	t.Helper()
	f := &hosttest.Fake{Name: "kc0"}
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kc0"}, Conn: f, Facts: Facts{SELinux: mode},
		Staged: []StagedFile{{Staged: StagedPath("/usr/local/bin/k3s"), Target: "/usr/local/bin/k3s", Symlinks: []string{"/usr/local/bin/kubectl"}}}}
	s := &Fleet{Hosts: Hosts{h}, Report: &Report{}}
	require.NoError(t, s.InstallStaged(context.Background(), h, "Install staged files"))
	return f.Commands()
}

// A moved binary keeps the label of where it was created: on a host with
// SELinux enabled, enforcing or permissive, the installed file and its
// links are relabelled after the move, as k3s's installer does.
func TestInstallStagedRelabelsWhereSELinuxIsEnabled(t *testing.T) {
	for _, mode := range []string{"enforcing", "permissive"} {
		ran := installOne(t, mode)
		mv, restore := -1, -1
		for i, c := range ran {
			if strings.Contains(c, "mv -f ") {
				mv = i
			}
			if strings.Contains(c, "restorecon") && strings.Contains(c, "/usr/local/bin/k3s") && strings.Contains(c, "/usr/local/bin/kubectl") {
				restore = i
			}
		}
		assert.True(t, mv >= 0 && restore > mv, "%s: restorecon after the move; ran %q", mode, ran)
	}
	for _, mode := range []string{"disabled", "absent", ""} {
		assert.NotContains(t, strings.Join(installOne(t, mode), "\n"), "restorecon", "%s: no relabelling", mode)
	}
}
