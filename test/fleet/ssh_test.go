package fleet

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A host that accepts TCP and never speaks SSH fails the dial after the
// fleet's handshake bound, not at ctx's end.
func TestDialBoundsTheHandshake(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() }) // held open, silent
		}
	}()
	dir := t.TempDir()
	require.NoError(t, NewFleetKey(KeyPath(dir), "t"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, knownHostsFile), nil, 0o600))
	port := l.Addr().(*net.TCPAddr).Port
	f := NewFleet(dir, "t", "test", []Host{{Name: "kc0", Address: "127.0.0.1", SSHPort: port}}, "", "")
	f.HandshakeTimeout = 300 * time.Millisecond

	start := time.Now()
	_, err = f.Dial(context.Background(), "kc0", UserRoot)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "i/o timeout")
	assert.Less(t, time.Since(start), 5*time.Second, "bounded by the fleet's 300ms, not the default 10 s")
}
