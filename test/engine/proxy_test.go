package testengine_test

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// tcpProxy forwards listen to target, as an L4 load balancer in front of
// the servers does; TLS passes through untouched.
func tcpProxy(t *testing.T, listen, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
}
