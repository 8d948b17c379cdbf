package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRootFromASubdirectory(t *testing.T) {
	root, err := Root() // the test runs in internal/repo
	require.NoError(t, err)
	assert.True(t, declaresModule(filepath.Join(root, "go.mod")))
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "internal", "repo"), wd)
}

func TestRootOutsideTheCheckout(t *testing.T) {
	dir := t.TempDir()
	// a go.mod of another module does not count
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644))
	t.Chdir(dir)
	_, err := Root()
	require.ErrorIs(t, err, ErrNotFound)
}

func TestRel(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, "build/fleet", Rel(filepath.Join(wd, "build/fleet")))
	assert.Equal(t, "/elsewhere/x", Rel("/elsewhere/x"))
	assert.Equal(t, "already/relative", Rel("already/relative"))
	assert.Equal(t,
		[]string{"-i", "key", "-o", "UserKnownHostsFile=known", "-o", "BatchMode=yes", "root@10.0.0.2", "/elsewhere"},
		RelArgs([]string{"-i", filepath.Join(wd, "key"), "-o", "UserKnownHostsFile=" + filepath.Join(wd, "known"), "-o", "BatchMode=yes", "root@10.0.0.2", "/elsewhere"}))
}
