package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshClientCache holds what every connection to a fleet needs, loaded once.
type sshClientCache struct {
	once     sync.Once
	err      error
	signer   ssh.Signer
	hostKeys ssh.HostKeyCallback
}

func (c *sshClientCache) load(f *Fleet) error {
	c.once.Do(func() {
		key, err := os.ReadFile(f.KeyPath)
		if err != nil {
			c.err = fmt.Errorf("fleet %q: read key: %w", f.Name, err)
			return
		}
		if c.signer, err = ssh.ParsePrivateKey(key); err != nil {
			c.err = fmt.Errorf("fleet %q: parse key %s: %w", f.Name, f.KeyPath, err)
			return
		}
		// Host keys are checked against the fleet's known_hosts, which
		// holds the keys the harness installed: no trust on first use.
		if c.hostKeys, err = knownhosts.New(f.KnownHostsPath); err != nil {
			c.err = fmt.Errorf("fleet %q: known_hosts: %w", f.Name, err)
		}
	})
	return c.err
}

// Dial opens an SSH connection to host as user, checking the host key
// against the fleet's known_hosts. The handshake is bounded by ctx and by
// f.HandshakeTimeout (10 s), so a host that accepts TCP but never speaks
// does not hang a test.
func (f *Fleet) Dial(ctx context.Context, host, user string) (*ssh.Client, error) {
	h, err := f.Host(host)
	if err != nil {
		return nil, err
	}
	if err := f.ssh.load(f); err != nil {
		return nil, err
	}
	addr := h.sshHostPort()
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: dial %s: %w", host, addr, err)
	}
	handshake := f.HandshakeTimeout
	if handshake <= 0 {
		handshake = 10 * time.Second
	}
	deadline := time.Now().Add(handshake)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(f.ssh.signer)},
		HostKeyCallback: f.ssh.hostKeys,
	})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("%s: ssh %s@%s: %w", host, user, addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// Run runs cmd on host as user over SSH and returns its stdout and stderr.
// A non-zero exit is an error (an *ssh.ExitError inside) with the host, user
// and command in its text; stdout and stderr are returned either way.
func (f *Fleet) Run(ctx context.Context, host, user, cmd string) (string, string, error) {
	return f.RunInput(ctx, host, user, "", cmd)
}

// RunInput is Run with stdin fed from input (e.g. a password for sudo -S).
func (f *Fleet) RunInput(ctx context.Context, host, user, input, cmd string) (string, string, error) {
	client, err := f.Dial(ctx, host, user)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = client.Close() }()
	return runOn(ctx, client, host, user, input, cmd)
}

// runOn runs cmd in a new session on an open client. Opening the session
// is bounded by ctx too: a guest that reboots under an open connection
// (qemu's user-mode forward keeps the host side open) never answers it.
func runOn(ctx context.Context, client *ssh.Client, host, user, input, cmd string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		sess, err := client.NewSession()
		if err != nil {
			done <- fmt.Errorf("session: %w", err)
			return
		}
		defer func() { _ = sess.Close() }()
		sess.Stdout, sess.Stderr = &stdout, &stderr
		if input != "" {
			sess.Stdin = strings.NewReader(input)
		}
		done <- sess.Run(cmd)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = client.Close() // unblocks NewSession and sess.Run
		err = errors.Join(ctx.Err(), <-done)
	}
	if err != nil {
		err = fmt.Errorf("%s: %s@%s: %q: %w: %s", host, user, host, cmd, err, Tail(stderr.String(), 400))
	}
	return stdout.String(), stderr.String(), err
}

// SSHArgs returns the arguments for OpenSSH's ssh to log in to a host as
// user: the fleet key only, and strict host key checking against the
// fleet's known_hosts.
func SSHArgs(f *Fleet, h Host, user string) []string {
	addr, port := h.SSHEndpoint()
	args := []string{
		"-t", "-i", f.KeyPath, "-o", "IdentitiesOnly=yes",
		"-o", "UserKnownHostsFile=" + f.KnownHostsPath, "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR",
	}
	if port != 22 {
		args = append(args, "-p", strconv.Itoa(port))
	}
	return append(args, user+"@"+addr)
}
