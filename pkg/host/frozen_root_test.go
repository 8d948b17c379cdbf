package host

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// freezer forwards connections to sshd until frozen: then it passes no
// byte either way, yet keeps the connections open, as a host that hung
// (or a network that drops everything) does.
type freezer struct {
	port   int
	frozen atomic.Bool
	thaw   chan struct{}
	mu     sync.Mutex
	conns  []net.Conn
}

func freezingForward(t *testing.T, to string) *freezer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z := &freezer{port: l.Addr().(*net.TCPAddr).Port, thaw: make(chan struct{})}
	t.Cleanup(func() {
		l.Close()
		close(z.thaw)
		z.mu.Lock()
		defer z.mu.Unlock()
		for _, c := range z.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			z.mu.Lock()
			z.conns = append(z.conns, c, up)
			z.mu.Unlock()
			go z.pass(up, c)
			go z.pass(c, up)
		}
	}()
	return z
}

func (z *freezer) pass(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if z.frozen.Load() {
			<-z.thaw
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestCancelOnAHostThatStoppedAnswering: the connection goes silent while a
// command runs; cancelling must still return, though neither the close
// nor the kill after it ever gets an answer.
func TestCancelOnAHostThatStoppedAnswering(t *testing.T) {
	f := sshd(t)
	// the frozen host never answers the close or the kill: the call
	// waits out the grace, then the kill's deadline (three graces)
	withKillGrace(t, 500*time.Millisecond)
	z := freezingForward(t, f.addr())
	h := f.sshHost(userNoPW)
	h.SSH.Port = z.port
	h.SSH.HostKey = string(ssh.MarshalAuthorizedKey(f.hostKey))
	c := connect(t, h, f.opts(nil, nil))
	marker := "sleep 73" // ends by itself should the clean-up below miss it
	t.Cleanup(func() {
		// the host never heard of the cancel: the command is this test's
		// to end, by its pid
		out, _ := exec.Command("pgrep", "-x", "-f", marker).Output()
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, marker+"; echo never")
		done <- err
	}()
	waitFor(t, func() bool { return running(marker) }, marker+" to start")
	z.frozen.Store(true)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the cancel")
	}
}
