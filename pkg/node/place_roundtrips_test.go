package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// TestPlaceAllAsksAConvergedHostOnce places, on a host that already holds
// them, an installed executable, one staged and not yet installed, and a
// file with a link, and the placement record that lists them: PlaceAll
// asks once and changes nothing, as PlanAll does in a dry run. A file
// whose mode is wrong is fixed as before. The count is the host's own
// record of commands, through a real shell.
func TestPlaceAllAsksAConvergedHostOnce(t *testing.T) {
	r, root := hostRoot(t)
	at := func(p string) string { return filepath.Join(root, p) }
	put := func(p string, body []byte, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(at(p)), 0o755))
		require.NoError(t, os.WriteFile(at(p), body, mode))
		require.NoError(t, os.Chmod(at(p), mode))
	}
	exe := placementOf("bin/k3s", "/usr/local/bin/k3s", []byte("k3s binary"))
	exe.Staged, exe.Mode = true, 0o755
	waiting := placementOf("bin/helm", "/usr/local/bin/helm", []byte("helm binary"))
	waiting.Staged, waiting.Mode = true, 0o755
	conf := placementOf("etc/a.conf", "/etc/cargoship/a.conf", []byte("a = 1\n"))
	conf.Symlinks = []string{"/etc/cargoship/a-link.conf"}
	put(exe.Target, []byte("k3s binary"), 0o755)
	put(StagedPath(waiting.Target), []byte("helm binary"), 0o755)
	put(conf.Target, []byte("a = 1\n"), 0o644)
	// the link as the rewritten command sees it: pointing into root
	require.NoError(t, os.Symlink(at(conf.Target), at("/etc/cargoship/a-link.conf")))
	pls := []Placement{exe, waiting, conf}
	// a converged host holds its placement record too
	real := func(p string) string {
		d, err := filepath.EvalSymlinks(at(p))
		require.NoError(t, err)
		return d
	}
	rec := placedRecord{Version: placedVersion}.merge([]placedEntry{
		{Path: exe.Target, Kind: placedFile, SHA256: exe.SHA256, Dir: real("/usr/local/bin")},
		{Path: waiting.Target, Kind: placedFile, SHA256: waiting.SHA256, Dir: real("/usr/local/bin")},
		{Path: conf.Target, Kind: placedFile, SHA256: conf.SHA256, Dir: real("/etc/cargoship")},
		{Path: conf.Symlinks[0], Kind: placedLink, Target: conf.Target, Dir: real("/etc/cargoship")},
	})
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	put(PlacedRecord, data, 0o600)

	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	s := &Fleet{Report: &Report{}}
	ctx := context.Background()

	changes, err := s.PlanAll(ctx, h, pls)
	require.NoError(t, err)
	assert.Empty(t, changes)
	assert.Len(t, r.Calls(), 1, "a dry run's reads")

	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", pls))
	assert.Len(t, r.Calls(), 2, "PlaceAll asked more than once")
	assert.Empty(t, s.Report.Changes())
	assert.Equal(t, []StagedFile{{Staged: StagedPath(waiting.Target), Target: waiting.Target}}, h.Staged)

	// a wrong mode is fixed, and what follows is asked again, as before
	// the batch: the host changed since
	require.NoError(t, os.Chmod(at(conf.Target), 0o600))
	h.Staged = nil
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{conf, exe}))
	st, err := os.Stat(at(conf.Target))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	assert.Len(t, r.Calls(), 2+5, "the batch, the fix, the link checked, the executable hashed, the record read")
}
