package node

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// The live probe runs through a real shell: a listener is open, a closed
// port refuses (live: a load balancer passing on to an API server not up
// yet), an address no connection can reach is not live.
func TestLiveProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedPort := closed.Addr().(*net.TCPAddr).Port
	require.NoError(t, closed.Close())

	s := &Fleet{}
	h := &Host{Conn: &hosttest.Local{}}
	ctx := context.Background()
	require.NoError(t, s.Live(ctx, h, "127.0.0.1", port))
	require.NoError(t, s.Live(ctx, h, "127.0.0.1", closedPort), "refused is live")
	assert.False(t, s.Answers(ctx, h, "127.0.0.1", closedPort), "but it does not answer")
	err = s.Live(ctx, h, "255.255.255.255", 6443)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "refused", "the reason is the host's")
}
