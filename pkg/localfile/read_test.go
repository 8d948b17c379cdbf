package localfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "doc.yaml")
	require.NoError(t, os.WriteFile(p, []byte("kind: Cluster\n"), 0o600))
	b, err := Read(p, 64)
	require.NoError(t, err)
	assert.Equal(t, "kind: Cluster\n", string(b))

	link := filepath.Join(t.TempDir(), "link.yaml")
	require.NoError(t, os.Symlink(p, link))
	b, err = Read(link, 64)
	require.NoError(t, err, "an operator's symlink to a regular file is followed")
	assert.Equal(t, "kind: Cluster\n", string(b))
}

func TestReadRefusesLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(p, make([]byte, 65), 0o600))
	_, err := Read(p, 64)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), p)
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	_, err := Read("/dev/zero", 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "/dev/zero is a character device")

	_, err = Read(t.TempDir(), 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "is a directory")

	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "named pipe")
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked on a FIFO with no writer")
	}
}
