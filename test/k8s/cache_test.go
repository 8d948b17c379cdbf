package k8s

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A second holder waits for the lock until its context ends, and gets it
// once the first lets go.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.lock")
	unlock, err := lock(context.Background(), path)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*lockPoll)
	defer cancel()
	_, err = lock(ctx, path)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "another process is building")

	got := make(chan error, 1)
	go func() {
		u, err := lock(context.Background(), path)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(lockPoll / 2)
	unlock()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(10 * lockPoll):
		t.Fatal("the lock was not handed over")
	}
}

// A stamped part is not built again; an unstamped one (cut short) is
// built again from an emptied directory.
func TestRunPartStamps(t *testing.T) {
	out := filepath.Join(t.TempDir(), "parts", "x")
	runs := 0
	p := part{name: "x", build: func(_ context.Context, out string) ([]string, error) {
		runs++
		_, err := os.Stat(filepath.Join(out, "left-over"))
		require.ErrorIs(t, err, os.ErrNotExist, "the directory is emptied first")
		return []string{"x v1", "y v2"}, os.WriteFile(filepath.Join(out, "bin"), []byte("x"), 0o755)
	}}
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "left-over"), nil, 0o644))
	notes, err := runPart(context.Background(), p, out)
	require.NoError(t, err)
	assert.Equal(t, []string{"x v1", "y v2"}, notes)
	assert.True(t, complete(out))

	notes, err = runPart(context.Background(), p, out)
	require.NoError(t, err)
	assert.Equal(t, []string{"x v1", "y v2"}, notes, "read back from the stamp")
	assert.Equal(t, 1, runs)

	failing := part{name: "f", build: func(context.Context, string) ([]string, error) {
		return nil, errors.New("broken")
	}}
	fout := filepath.Join(t.TempDir(), "f")
	_, err = runPart(context.Background(), failing, fout)
	require.ErrorContains(t, err, "build f: broken")
	assert.False(t, complete(fout), "a failed part has no stamp")
}

// The build record reads back as written, and one naming another
// directory (a cache moved by hand) is refused.
func TestArtifactsRecord(t *testing.T) {
	dir := t.TempDir()
	a := &Artifacts{Release: V1_35_4, Dir: dir, BinDir: filepath.Join(dir, "bin"),
		Images: []Image{{Name: "pause", Ref: "registry.k8s.io/pause:3.10.1", Digest: "sha256:00"}}}
	require.NoError(t, writeArtifacts(a))
	got, err := readArtifacts(dir)
	require.NoError(t, err)
	assert.Equal(t, a, got)
	assert.Equal(t, []string{"registry.k8s.io/pause:3.10.1"}, got.ImageRefs())

	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, stampName), []byte(`{"Dir":"/elsewhere"}`), 0o644))
	_, err = readArtifacts(other)
	require.ErrorContains(t, err, "names another directory")
}
