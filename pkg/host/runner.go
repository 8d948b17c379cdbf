// Package host is one connected host: run commands, run them as root, and
// read, write and upload files. Every phase reaches a machine through it.
package host

import (
	"context"
	"fmt"
	"io"
)

// Runner runs commands on one host. Commands are shell command lines: build
// them with shell.Join or shell.Quote, never by pasting a document value.
type Runner interface {
	// String names the host in messages and logs.
	String() string
	// Run runs cmd as the login user and returns its stdout, exactly as
	// written (trim it yourself).
	Run(ctx context.Context, cmd string, opts ...RunOption) (string, error)
	// Sudo runs cmd as root: directly for a root login, through sudo -n for
	// passwordless sudo, through sudo -S with the password otherwise.
	Sudo(ctx context.Context, cmd string, opts ...RunOption) (string, error)
}

// RunOptions adjust one command.
type RunOptions struct {
	// Stdin is fed to the command.
	Stdin io.Reader
	// Stdout, when set, receives stdout as it streams (Run then returns "").
	Stdout io.Writer
	// Redact lists strings (tokens, passwords) to mask in errors and logs.
	Redact []string
	// MaxOutput bounds the stdout Run keeps (MaxOutput when 0); stderr is
	// always bounded by MaxOutput. A command printing more is stopped with
	// an *OutputLimitError. A Stdout writer is the caller's to bound.
	MaxOutput int64

	noKill bool // a kill's own command: never kill after it
}

// RunOption sets a RunOptions field.
type RunOption func(*RunOptions)

// WithStdin feeds r to the command.
func WithStdin(r io.Reader) RunOption { return func(o *RunOptions) { o.Stdin = r } }

// WithStdout streams stdout to w.
func WithStdout(w io.Writer) RunOption { return func(o *RunOptions) { o.Stdout = w } }

// WithMaxOutput bounds what the command may print (see RunOptions).
func WithMaxOutput(n int64) RunOption { return func(o *RunOptions) { o.MaxOutput = n } }

// WithRedact masks secrets in errors and logs.
func WithRedact(s ...string) RunOption {
	return func(o *RunOptions) { o.Redact = append(o.Redact, s...) }
}

// Apply builds RunOptions from options.
func Apply(opts []RunOption) RunOptions {
	var o RunOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ExitError is a command that ran and exited non-zero. Cmd and Stderr have
// the run's secrets masked.
type ExitError struct {
	Host   string
	Cmd    string
	Code   int
	Stderr string
	// Signal names the signal that killed the command ("TERM"), if one did.
	Signal string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s: `%s` exited %d", e.Host, e.Cmd, e.Code)
	if e.Signal != "" {
		msg = fmt.Sprintf("%s: `%s` was killed by SIG%s", e.Host, e.Cmd, e.Signal)
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}
