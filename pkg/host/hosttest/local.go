// Package hosttest holds the host.Runners tests use in place of a
// connected host: Local runs commands in a real shell on this machine (in
// a network namespace with Netns, with stand-in tools first on PATH with
// Stubs or Tools), and Fake answers from scripted replies and records
// every command it was given.
package hosttest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Local runs commands with /bin/sh on this machine. Prefix goes before
// `sh -c CMD` (e.g. ip netns exec NS); Env is added to the environment;
// Rewrite, when set, turns the command line into the one that runs (e.g.
// moving a host's absolute paths under a temp directory). Sudo is Run:
// tests either run as root or point steps at temporary paths.
type Local struct {
	Name    string
	Prefix  []string
	Env     []string
	Rewrite func(cmd string) string

	mu    sync.Mutex
	calls []string
}

var _ host.Runner = (*Local)(nil)

// String implements host.Runner.
func (l *Local) String() string {
	if l.Name == "" {
		return "local"
	}
	return l.Name
}

// Run implements host.Runner. A command that exits non-zero gives a
// *host.ExitError with its stderr, as a host.Conn does.
func (l *Local) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	l.mu.Lock()
	l.calls = append(l.calls, cmd)
	l.mu.Unlock()
	o := host.Apply(opts)
	if l.Rewrite != nil {
		cmd = l.Rewrite(cmd)
	}
	args := append(slices.Clone(l.Prefix), "sh", "-c", cmd)
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = append(c.Environ(), l.Env...)
	c.Stdin = o.Stdin
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if o.Stdout != nil {
		c.Stdout = o.Stdout
	}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), &host.ExitError{Host: l.String(), Cmd: cmd, Code: ee.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.String(), err
}

// Sudo implements host.Runner.
func (l *Local) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return l.Run(ctx, cmd, opts...)
}

// Calls returns the command lines run so far, in order.
func (l *Local) Calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}
