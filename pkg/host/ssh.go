package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/retry"
	"golang.org/x/crypto/ssh"
)

// sshHop is one SSH server on the way to a host: a bastion or the host.
type sshHop struct {
	addr    string // host:port
	user    string
	keyPath string
	hostKey string
}

// hops lists the servers to pass, outermost bastion first, the host last.
func hops(s *v1alpha1.SSH) []sshHop {
	var out []sshHop
	for ; s != nil; s = s.Bastion {
		user, port := s.User, s.Port
		if user == "" {
			user = v1alpha1.DefaultSSHUser
		}
		if port == 0 {
			port = v1alpha1.DefaultSSHPort
		}
		out = append([]sshHop{{addr: net.JoinHostPort(s.Address, strconv.Itoa(port)), user: user, keyPath: s.KeyPath, hostKey: s.HostKey}}, out...)
	}
	return out
}

// sshTransport runs commands over golang.org/x/crypto/ssh.
type sshTransport struct {
	client    *ssh.Client
	chain     []*ssh.Client // bastions, outermost first
	stop      chan struct{}
	closeOnce sync.Once
	closeErr  error
	session   chan struct{} // bounds concurrent sessions below sshd's MaxSessions (10)
}

// maxSessions stays under OpenSSH's default MaxSessions of 10.
const maxSessions = 8

// keepAlive is how often an idle connection is checked; three missed
// answers close it, so a dead host fails commands instead of hanging them.
const keepAlive = 15 * time.Second

// connectPolicy is how Connect retries a host that is not up yet: after
// 250ms, doubling to 5s, until o.Timeout, with a debug line per retry.
func connectPolicy(name string, o ConnectOptions) retry.Policy {
	return retry.Policy{
		Wait: 250 * time.Millisecond, MaxWait: 5 * time.Second, Timeout: o.Timeout,
		Log: o.Log, Message: "connect failed, retrying", Attrs: []any{"host", name},
	}
}

// dialSSH connects to the host through its bastions. It retries what looks
// like a host still booting until o.Timeout, and gives up at once on what
// waiting will not fix (a retry.Permanent error): a refused login or a
// wrong host key.
func dialSSH(parent context.Context, name string, s *v1alpha1.SSH, o ConnectOptions) (*sshTransport, error) {
	keys := &keyring{lookupEnv: o.LookupEnv}
	defer keys.close()
	start, tries := time.Now(), &attempts{}
	t, err := retry.Value(parent, connectPolicy(name, o), func(ctx context.Context) (*sshTransport, error) {
		t, err := dialChain(ctx, name, hops(s), keys, o.KnownHostsPath)
		return t, tries.record(ctx, err)
	})
	if err != nil {
		return nil, connectFailed(parent, name, o, start, tries, err)
	}
	go t.keepAlive()
	return t, nil
}

// dialChain opens every hop in turn, each through the previous one.
func dialChain(ctx context.Context, name string, chain []sshHop, keys *keyring, knownHosts string) (*sshTransport, error) {
	var clients []*ssh.Client
	fail := func(err error) (*sshTransport, error) {
		for i := len(clients) - 1; i >= 0; i-- {
			_ = clients[i].Close()
		}
		return nil, err
	}
	for i, hop := range chain {
		hopName := name
		if i < len(chain)-1 {
			hopName = fmt.Sprintf("%s (bastion %s)", name, hop.addr)
		}
		var conn net.Conn
		var err error
		if i == 0 {
			var d net.Dialer
			conn, err = d.DialContext(ctx, "tcp", hop.addr)
		} else {
			conn, err = clients[i-1].DialContext(ctx, "tcp", hop.addr)
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) && refused.Reason == ssh.Prohibited {
			// the bastion's policy forbids it: waiting will not help
			return fail(retry.Permanent(fmt.Errorf("host %s: the bastion will not connect to %s: %w", hopName, hop.addr, err)))
		}
		if err != nil {
			return fail(fmt.Errorf("host %s: dialling %s: %w", hopName, hop.addr, err))
		}
		c, err := handshake(ctx, hopName, conn, hop, keys, knownHosts)
		if err != nil {
			return fail(err)
		}
		clients = append(clients, c)
	}
	last := len(clients) - 1
	return &sshTransport{client: clients[last], chain: clients[:last], stop: make(chan struct{}), session: make(chan struct{}, maxSessions)}, nil
}

// handshake logs in to one hop over conn.
func handshake(ctx context.Context, name string, conn net.Conn, hop sshHop, keys *keyring, knownHosts string) (*ssh.Client, error) {
	checkKey, algos, err := hostKeyCheck(name, hop.addr, hop.hostKey, knownHosts)
	if err != nil {
		_ = conn.Close()
		return nil, retry.Permanent(err)
	}
	auth, tried, err := keys.authFor(name, hop)
	if err != nil {
		_ = conn.Close()
		return nil, retry.Permanent(err)
	}
	cfg := &ssh.ClientConfig{
		User:              hop.user,
		Auth:              []ssh.AuthMethod{auth},
		HostKeyCallback:   checkKey,
		HostKeyAlgorithms: algos,
	}
	// a server that accepts TCP and never speaks must not hang us
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = conn.Close()
		case <-done:
		}
	}()
	sc, chans, reqs, err := ssh.NewClientConn(conn, hop.addr, cfg)
	close(done)
	if err == nil {
		return ssh.NewClient(sc, chans, reqs), nil
	}
	_ = conn.Close()
	var hk *HostKeyError
	switch {
	case errors.As(err, &hk):
		return nil, retry.Permanent(hk)
	case strings.Contains(err.Error(), "unable to authenticate"):
		return nil, retry.Permanent(fmt.Errorf("host %s: %s@%s refused the login with %s: %w", name, hop.user, hop.addr, tried, err))
	case ctx.Err() != nil:
		return nil, fmt.Errorf("host %s: ssh handshake with %s: %w", name, hop.addr, ctx.Err())
	case transient(err):
		return nil, fmt.Errorf("host %s: ssh handshake with %s: %w", name, hop.addr, err)
	}
	return nil, retry.Permanent(fmt.Errorf("host %s: ssh handshake with %s: %w", name, hop.addr, err))
}

// transient reports a handshake failure that a host still starting (or an
// sshd over MaxStartups) gives: the connection dropped or reset.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne)
}

// keepAlive pings the server; three unanswered pings close the connection.
func (t *sshTransport) keepAlive() {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	missed := 0
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		answered := make(chan error, 1)
		go func() {
			_, _, err := t.client.SendRequest("keepalive@openssh.com", true, nil)
			answered <- err
		}()
		select {
		case <-t.stop:
			return
		case err := <-answered:
			if err != nil {
				missed = 3
			} else {
				missed = 0
			}
		case <-time.After(keepAlive):
			missed++
		}
		if missed >= 3 {
			_ = t.close()
			return
		}
	}
}

// close may run twice: from Close and from keepAlive giving up.
func (t *sshTransport) close() error {
	t.closeOnce.Do(func() {
		close(t.stop)
		err := t.client.Close()
		for i := len(t.chain) - 1; i >= 0; i-- {
			_ = t.chain[i].Close()
		}
		if !errors.Is(err, net.ErrClosed) {
			t.closeErr = err
		}
	})
	return t.closeErr
}

func (t *sshTransport) run(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) error {
	select {
	case t.session <- struct{}{}:
		defer func() { <-t.session }()
	case <-ctx.Done():
		return ctx.Err()
	}
	sess, err := t.newSession(ctx)
	if err != nil {
		return fmt.Errorf("opening an ssh session: %w", err)
	}
	defer func() { _ = sess.Close() }()
	sess.Stdout, sess.Stderr = stdout, stderr
	// feed stdin ourselves: x/crypto's own copier may go on reading the
	// caller's reader after Wait returns
	var in io.WriteCloser
	if stdin != nil {
		if in, err = sess.StdinPipe(); err != nil {
			return fmt.Errorf("opening stdin: %w", err)
		}
	}
	if err := sess.Start(line); err != nil {
		return fmt.Errorf("starting the command: %w", err)
	}
	// Only once the exec request is answered: sshd drops what a session
	// channel receives before its command runs, the EOF too, and the
	// command then waits for input for ever.
	var fed chan struct{}
	if in != nil {
		fed = make(chan struct{})
		go func() {
			defer close(fed)
			_, _ = io.Copy(in, stdin)
			_ = in.Close()
		}()
	}
	done := make(chan struct{})
	var waitErr error // read only once done is closed
	go func() { waitErr = sess.Wait(); close(done) }()
	cancelled := false
	select {
	case <-done:
	case <-ctx.Done():
		// sshd delivers TERM to the command's process group as the login
		// user; Conn then kills what is left, as root if need be
		cancelled = true
		_ = sess.Signal(ssh.SIGTERM)
		_ = sess.Close()
		// a host that never closes its side of the channel would hold
		// Wait for ever: give it the grace a killed command gets, then go
		// (the stream's writers refuse what still comes; Conn.Close ends it)
		select {
		case <-done:
		case <-time.After(killGrace):
		}
	}
	_ = sess.Close()
	if fed != nil {
		// the copier stops at its next write now the session is gone;
		// a reader that blocks forever is left behind, as exec's WaitDelay does
		select {
		case <-fed:
		case <-time.After(killGrace):
		}
	}
	if cancelled {
		return ctx.Err()
	}
	err = waitErr
	var ee *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case errors.As(err, &ee):
		if ee.Signal() != "" {
			return &exitStatus{code: -1, signal: ee.Signal()}
		}
		return &exitStatus{code: ee.ExitStatus()}
	case errors.As(err, &missing):
		return errors.New("the command ended without an exit status: the connection dropped")
	}
	return err
}

// newSession opens a session, or gives up when ctx ends: x/crypto waits
// for the server's answer without a bound, and a host that stopped
// answering (the kill after a cancel goes to such hosts too) never gives one.
func (t *sshTransport) newSession(ctx context.Context) (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := t.client.NewSession()
		ch <- opened{s, err}
	}()
	select {
	case o := <-ch:
		return o.s, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.s != nil {
				_ = o.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
