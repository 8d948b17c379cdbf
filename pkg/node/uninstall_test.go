package node

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// hostRoot runs a host's commands on this machine with its absolute paths
// moved under a temp directory.
func hostRoot(t *testing.T) (*hosttest.Local, string) {
	root := t.TempDir()
	abs := regexp.MustCompile(`(^|[\s'"=])/(etc|var|run|usr|opt)/`)
	return &hosttest.Local{Name: "kw0", Rewrite: func(cmd string) string {
		return abs.ReplaceAllString(cmd, "${1}"+root+"/${2}/")
	}}, root
}

func TestUninstallNodeRemovesTheEnginesFilesAndOnlyThose(t *testing.T) {
	r, root := hostRoot(t)
	at := func(p string) string { return filepath.Join(root, p) }
	mkfile := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(at(p)), 0o755))
		require.NoError(t, os.WriteFile(at(p), []byte("x"), 0o644))
	}
	for _, p := range []string{
		"/usr/local/bin/k3s", "/usr/local/bin/.k3s.cargoship-staged", "/usr/local/bin/k3s-killall.sh",
		"/etc/systemd/system/k3s-agent.service", "/etc/rancher/k3s/config.yaml", "/var/lib/rancher/k3s/agent/images/a.tar",
		"/etc/cargoship/sysctl.conf", "/usr/bin/kubectl", "/usr/local/bin/crictl",
		"/etc/rancher/node/password", "/var/lib/rancher/other/keep", "/usr/local/bin/helm",
	} {
		mkfile(p)
	}
	require.NoError(t, os.Symlink("k3s", at("/usr/local/bin/kubectl")))

	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0", Role: v1alpha1.RoleWorker}, Conn: r, EngineVersion: "v1.35.3+k3s1"}
	s := &Fleet{Engine: eng, Hosts: Hosts{h}, Report: &Report{}}
	u := s.UninstallFor(h, []string{"/usr/bin/kubectl"}) // what the package placed
	ctx := context.Background()

	plan, err := s.PlanUninstall(ctx, h, u)
	require.NoError(t, err)
	var planned []string
	for _, c := range plan {
		planned = append(planned, c.What)
	}
	assert.Contains(t, planned, "remove /var/lib/rancher/k3s")
	assert.Contains(t, planned, "remove /usr/local/bin/kubectl")
	assert.NotContains(t, planned, "remove /usr/local/bin/crictl", "not a link: not k3s's")
	_, err = os.Stat(at("/usr/local/bin/k3s"))
	require.NoError(t, err, "planning changes nothing")

	require.NoError(t, s.UninstallNode(ctx, h, "Stop and uninstall", u))
	for _, gone := range []string{
		"/usr/local/bin/k3s", "/usr/local/bin/.k3s.cargoship-staged", "/usr/local/bin/k3s-killall.sh", "/usr/local/bin/kubectl",
		"/etc/systemd/system/k3s-agent.service", "/etc/rancher/k3s", "/var/lib/rancher/k3s", "/etc/cargoship", "/usr/bin/kubectl",
	} {
		_, err := os.Lstat(at(gone))
		require.ErrorIs(t, err, os.ErrNotExist, "%s should be gone", gone)
	}
	for _, kept := range []string{"/etc/rancher/node/password", "/var/lib/rancher/other/keep", "/usr/local/bin/crictl", "/usr/local/bin/helm"} {
		_, err := os.Lstat(at(kept))
		require.NoError(t, err, "%s is not the engine's and stays", kept)
	}
	assert.Empty(t, h.EngineVersion)

	again, err := s.PlanUninstall(ctx, h, u)
	require.NoError(t, err)
	assert.Empty(t, again, "a second reset finds nothing to do")
}

func TestUninstallForNeverListsASharedDirectory(t *testing.T) {
	eng, err := engine.For(v1alpha1.EngineRKE2)
	require.NoError(t, err)
	s := &Fleet{Engine: eng}
	u := s.UninstallFor(&Host{Spec: &v1alpha1.Host{}}, []string{"/usr/local/bin", "/etc", "/etc/rancher/node", "/usr/local/bin/helm"})
	for _, p := range []string{"/usr/local/bin", "/etc", "/etc/rancher/node"} {
		assert.NotContains(t, u.Dirs, p)
		assert.NotContains(t, u.Guessed, p)
	}
	assert.Contains(t, u.Guessed, "/usr/local/bin/helm")
	assert.Contains(t, u.Dirs, "/etc/cargoship")
	assert.Contains(t, u.Dirs, "/var/lib/rancher/rke2")
	assert.NotContains(t, u.Dirs, "/usr/local/bin/helm", "a placed path is never a directory to remove")
	assert.Equal(t, []string{"rke2-agent", "rke2-server"}, u.Units)
}
