// Package ostest holds the Runners the tests of hostos and firewall use: a
// Local runner that runs commands in a real shell on this machine (in a
// network namespace when asked), and a Fake that answers from captured
// output and records every command line it was given.
package ostest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Local runs commands with /bin/sh on this machine. Prefix goes before
// `sh -c CMD` (e.g. ip netns exec NS); Env is added to the environment.
// Sudo is Run: tests either run as root or point steps at temporary paths.
type Local struct {
	Name   string
	Prefix []string
	Env    []string

	mu    sync.Mutex
	Calls []string
}

// String implements host.Runner.
func (l *Local) String() string {
	if l.Name == "" {
		return "local"
	}
	return l.Name
}

// Run implements host.Runner.
func (l *Local) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	l.mu.Lock()
	l.Calls = append(l.Calls, cmd)
	l.mu.Unlock()
	o := host.Apply(opts)
	args := append(append([]string{}, l.Prefix...), "sh", "-c", cmd)
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

// Call is one command a Fake received.
type Call struct {
	Cmd   string
	Sudo  bool
	Stdin string
}

// Reply answers a command line: the first reply whose Match is a substring
// of the command wins.
type Reply struct {
	Match string
	Out   string
	Err   error
}

// Fake answers commands from Replies and records them. A command no reply
// matches gets "" and no error unless Strict is set.
type Fake struct {
	Name    string
	Replies []Reply
	Strict  bool

	mu    sync.Mutex
	Calls []Call
}

// On adds a reply and returns f for chaining.
func (f *Fake) On(match, out string) *Fake {
	f.Replies = append(f.Replies, Reply{Match: match, Out: out})
	return f
}

// Fail adds a reply failing with code and stderr.
func (f *Fake) Fail(match string, code int, stderr string) *Fake {
	f.Replies = append(f.Replies, Reply{Match: match, Err: &host.ExitError{Host: f.String(), Cmd: match, Code: code, Stderr: stderr}})
	return f
}

// String implements host.Runner.
func (f *Fake) String() string {
	if f.Name == "" {
		return "fake"
	}
	return f.Name
}

// Run implements host.Runner.
func (f *Fake) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return f.do(cmd, false, opts)
}

// Sudo implements host.Runner.
func (f *Fake) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return f.do(cmd, true, opts)
}

func (f *Fake) do(cmd string, sudo bool, opts []host.RunOption) (string, error) {
	o := host.Apply(opts)
	var stdin string
	if o.Stdin != nil {
		b, _ := io.ReadAll(o.Stdin)
		stdin = string(b)
	}
	f.mu.Lock()
	f.Calls = append(f.Calls, Call{Cmd: cmd, Sudo: sudo, Stdin: stdin})
	f.mu.Unlock()
	for _, r := range f.Replies {
		if strings.Contains(cmd, r.Match) {
			return r.Out, r.Err
		}
	}
	if f.Strict {
		return "", &host.ExitError{Host: f.String(), Cmd: cmd, Code: 127, Stderr: "ostest.Fake: no reply for this command"}
	}
	return "", nil
}

// Commands returns the command lines received, in order.
func (f *Fake) Commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.Calls))
	for i, c := range f.Calls {
		out[i] = c.Cmd
	}
	return out
}

// Ran reports whether any command line contains s.
func (f *Fake) Ran(s string) bool {
	for _, c := range f.Commands() {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}
