package v1alpha1

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A document path that is a device or a FIFO is refused at once: /dev/zero
// passed the size check (its size is 0) and then grew without end.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cluster.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{"/dev/zero", fifo} {
		_, _, err := LoadClusterFile(path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), "not a regular file")
		_, _, err = LoadDistroFile(path)
		require.Error(t, err, path)
		_, _, err = LoadSettingsFile(path)
		require.Error(t, err, path)
	}
}
