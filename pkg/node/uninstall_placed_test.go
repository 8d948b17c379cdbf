package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// resetHost is a k3s worker whose absolute paths live under a temp
// directory (hostRoot), with at mapping a host path there.
func resetHost(t *testing.T) (*Fleet, *Host, *hosttest.Local, func(string) string) {
	t.Helper()
	r, root := hostRoot(t)
	eng, err := engine.For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0", Role: v1alpha1.RoleWorker}, Conn: r}
	s := &Fleet{Engine: eng, Hosts: Hosts{h}, Report: &Report{}}
	return s, h, r, func(p string) string { return filepath.Join(root, p) }
}

// reset uninstalls h as phase 42 does, guessed being what the package and
// inventory name (what the phase passes as PlacedTargets).
func reset(t *testing.T, s *Fleet, h *Host, guessed ...string) {
	t.Helper()
	require.NoError(t, s.UninstallNode(context.Background(), h, "Stop and uninstall", s.UninstallFor(h, guessed)))
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

func write(t *testing.T, p, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

// noted reports whether a report note names every one of words.
func noted(s *Fleet, words ...string) bool {
	for _, n := range s.Report.Notes() {
		all := true
		for _, w := range words {
			all = all && strings.Contains(n, w)
		}
		if all {
			return true
		}
	}
	return false
}

// TestResetLeavesWhatChangedSincePlacement: a placed file an admin has
// rewritten since, and a link pointed elsewhere, stay (with a note); what
// is still as placed goes.
func TestResetLeavesWhatChangedSincePlacement(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	kept := placementOf("files/a.conf", "/opt/tools/a.conf", []byte("a = 1\n"))
	gone := placementOf("files/b.conf", "/opt/tools/b.conf", []byte("b = 1\n"))
	gone.Symlinks = []string{"/opt/tools/b-link.conf"}
	other := placementOf("files/c.conf", "/opt/tools/c.conf", []byte("c = 1\n"))
	other.Symlinks = []string{"/opt/tools/c-link.conf"}
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{kept, gone, other}))

	write(t, at(kept.Target), "a = 2 # the admin's\n")
	require.NoError(t, os.Remove(at("/opt/tools/c-link.conf")))
	require.NoError(t, os.Symlink(at("/opt/tools/a.conf"), at("/opt/tools/c-link.conf")))

	reset(t, s, h, kept.Target, gone.Target, "/opt/tools/b-link.conf", other.Target, "/opt/tools/c-link.conf")
	assert.False(t, exists(t, at(gone.Target)), "unchanged since placed: removed")
	assert.False(t, exists(t, at("/opt/tools/b-link.conf")), "a link still pointing where it was pointed: removed")
	assert.False(t, exists(t, at(other.Target)))
	b, err := os.ReadFile(at(kept.Target))
	require.NoError(t, err, "a file changed since placed stays")
	assert.Equal(t, "a = 2 # the admin's\n", string(b))
	assert.True(t, exists(t, at("/opt/tools/c-link.conf")), "a link pointed elsewhere stays")
	assert.True(t, noted(s, "kw0", kept.Target, "changed since cargoship placed it"), "notes: %q", s.Report.Notes())
	assert.True(t, noted(s, "kw0", "/opt/tools/c-link.conf", "points elsewhere"), "notes: %q", s.Report.Notes())
}

// TestResetDoesNotFollowASymlinkedParent: the directory a file was placed
// in is swapped for a link to one holding a file of the same name and
// bytes. The reset must not remove that file through the link.
func TestResetDoesNotFollowASymlinkedParent(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	pl := placementOf("files/tool", "/opt/tools/bin/tool", []byte("#!/bin/sh\n"))
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{pl}))

	victim := at("/srv/data/tool")
	write(t, victim, "#!/bin/sh\n")
	require.NoError(t, os.Rename(at("/opt/tools/bin"), at("/opt/tools/bin.moved")))
	require.NoError(t, os.Symlink(filepath.Dir(victim), at("/opt/tools/bin")))

	reset(t, s, h, pl.Target)
	assert.True(t, exists(t, victim), "a file reached through a symlinked parent stays")
	assert.True(t, exists(t, at("/opt/tools/bin")), "the link itself stays")
	assert.True(t, noted(s, "kw0", pl.Target, "resolves to"), "notes: %q", s.Report.Notes())
}

// TestResetNeverRemovesADirectoryTarget: a placed path that holds a
// directory by the reset (an admin's, or what a hostile user put there)
// is not removed with what it holds.
func TestResetNeverRemovesADirectoryTarget(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	pl := placementOf("files/app", "/opt/tools/conf.d/app", []byte("x\n"))
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{pl}))
	require.NoError(t, os.Remove(at(pl.Target)))
	write(t, at(pl.Target+"/data"), "someone's data\n")

	reset(t, s, h, pl.Target)
	assert.True(t, exists(t, at(pl.Target+"/data")), "a directory at a placed path stays with what it holds")
	assert.True(t, noted(s, "kw0", pl.Target, "not a regular file"), "notes: %q", s.Report.Notes())
}

// TestResetWithoutARecord: a host placed by a cargoship older than the
// record has none. The package's and inventory's paths then go only
// where they are regular files or links in a directory that is no link:
// never a directory, never through a symlinked parent.
func TestResetWithoutARecord(t *testing.T) {
	s, h, _, at := resetHost(t)
	write(t, at("/opt/tools/file"), "x")
	write(t, at("/opt/tools/.file.cargoship-staged"), "x")
	write(t, at("/opt/tools/dir/held"), "someone's")
	write(t, at("/srv/data/victim"), "someone's")
	require.NoError(t, os.Symlink(at("/srv/data"), at("/opt/linked")))

	reset(t, s, h, "/opt/tools/file", "/opt/tools/dir", "/opt/linked/victim")
	assert.False(t, exists(t, at("/opt/tools/file")), "a regular file the package names goes")
	assert.False(t, exists(t, at("/opt/tools/.file.cargoship-staged")), "and its staged copy")
	assert.True(t, exists(t, at("/opt/tools/dir/held")), "a directory the inventory names stays")
	assert.True(t, exists(t, at("/srv/data/victim")), "a file through a symlinked parent stays")
	assert.True(t, noted(s, "kw0", "no placement record"), "notes: %q", s.Report.Notes())
}

// TestResetRemovesAnInstalledFileStagedOver: an executable installed, then
// a new version staged and not yet installed (a staging-only run): both
// are cargoship's and both go.
func TestResetRemovesAnInstalledFileStagedOver(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	v1 := placementOf("bin/helm", "/opt/tools/bin/helm", []byte("helm v1"))
	v1.Staged, v1.Mode = true, 0o755
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{v1}))
	require.NoError(t, s.InstallStaged(ctx, h, "Install staged files"))
	v2 := placementOf("bin/helm", "/opt/tools/bin/helm", []byte("helm v2"))
	v2.Staged, v2.Mode = true, 0o755
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{v2}))
	require.True(t, exists(t, at(StagedPath(v2.Target))))

	reset(t, s, h, v1.Target)
	assert.False(t, exists(t, at(v1.Target)), "the version installed before goes")
	assert.False(t, exists(t, at(StagedPath(v2.Target))), "the staged one goes")
	assert.Empty(t, s.Report.Notes())
}

// TestPlanUninstallNamesWhatItWouldLeave: the dry run lists what it would
// remove and notes what it would leave, changing nothing.
func TestPlanUninstallNamesWhatItWouldLeave(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	a := placementOf("files/a.conf", "/opt/tools/a.conf", []byte("a"))
	b := placementOf("files/b.conf", "/opt/tools/b.conf", []byte("b"))
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{a, b}))
	write(t, at(a.Target), "changed")

	plan, err := s.PlanUninstall(ctx, h, s.UninstallFor(h, nil))
	require.NoError(t, err)
	var what []string
	for _, c := range plan {
		what = append(what, c.What)
	}
	assert.Contains(t, what, "remove "+b.Target)
	assert.NotContains(t, what, "remove "+a.Target)
	assert.Contains(t, what, "remove "+StateDir)
	assert.True(t, noted(s, "kw0", "would leave", a.Target), "notes: %q", s.Report.Notes())
	assert.True(t, exists(t, at(b.Target)), "planning changes nothing")
}

// TestResetRemovesWhatABrokenUploadLeft: the partial file of an upload
// broken off beside a placed file, and a relay's grant record next to it,
// go; a directory at that name stays.
func TestResetRemovesWhatABrokenUploadLeft(t *testing.T) {
	s, h, _, at := resetHost(t)
	ctx := context.Background()
	a := placementOf("files/a", "/opt/tools/a", []byte("a"))
	b := placementOf("files/b", "/opt/tools/b", []byte("b"))
	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{a, b}))
	write(t, at(a.Target+".cargoship-part"), "half of a new a")
	write(t, at(a.Target+".cargoship-part.grant"), "revoked")
	write(t, at(b.Target+".cargoship-part/held"), "someone's")

	reset(t, s, h)
	assert.False(t, exists(t, at(a.Target+".cargoship-part")))
	assert.False(t, exists(t, at(a.Target+".cargoship-part.grant")))
	assert.True(t, exists(t, at(b.Target+".cargoship-part/held")), "a directory is never removed from the record")
}
