package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// ConnectOptions tune how Connect reaches a host.
type ConnectOptions struct {
	// KnownHostsPath is the known_hosts file host keys are checked
	// against. Empty: taken from the environment by KnownHostsFromEnv, so
	// SSH_KNOWN_HOSTS="" turns checking off. A host's hostKey pin wins
	// over either.
	KnownHostsPath string
	// Timeout bounds how long Connect keeps retrying a host that does not
	// answer yet (30s when zero). Auth failures and host key errors are
	// not retried.
	Timeout time.Duration
	// Log receives a debug line per command (nil: discard).
	Log *slog.Logger
	// LookupEnv reads SSH_AUTH_SOCK, SSH_KNOWN_HOSTS, HOME and the sudo
	// password variable (nil: os.LookupEnv). It tells unset from empty
	// because SSH_KNOWN_HOSTS="" means something.
	LookupEnv func(string) (string, bool)
}

// DefaultConnectTimeout is used when ConnectOptions.Timeout is zero.
const DefaultConnectTimeout = 30 * time.Second

func (o ConnectOptions) withDefaults() ConnectOptions {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.KnownHostsPath == "" {
		o.KnownHostsPath = KnownHostsFromEnv(o.LookupEnv)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultConnectTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Conn is one connected host. It implements Runner; its methods are safe
// for concurrent use.
type Conn struct {
	name string
	t    transport
	log  *slog.Logger
	sudo sudoState

	sftpMu    sync.Mutex
	sftpFound bool   // sftpPath has been looked for
	sftpPath  string // "" when the host has no sftp-server
}

var _ Runner = (*Conn)(nil)

// Connect opens the host's connection (ssh, openSSH or localhost) and
// finds out once how it reaches root. A host that cannot reach root still
// connects: SudoMode reports why, and Sudo fails with that reason.
func Connect(ctx context.Context, h *v1alpha1.Host, opts ConnectOptions) (*Conn, error) {
	o := opts.withDefaults()
	name := h.Name()
	var (
		t   transport
		err error
	)
	switch {
	case h.SSH != nil:
		t, err = dialSSH(ctx, name, h.SSH, o)
	case h.OpenSSH != nil:
		t, err = dialOpenSSH(ctx, name, h.OpenSSH, o)
	case h.Localhost != nil && h.Localhost.Enabled:
		t = localTransport{}
	case h.Localhost != nil:
		return nil, fmt.Errorf("host %s: localhost.enabled is false; set it to true or use ssh", name)
	default:
		return nil, fmt.Errorf("host %s has no connection: set one of ssh, openSSH or localhost", name)
	}
	if err != nil {
		return nil, err
	}
	c := &Conn{name: name, t: t, log: o.Log}
	if err := c.detectSudo(ctx, h.SudoPasswordEnv, o.getenv); err != nil {
		_ = t.close()
		return nil, err
	}
	c.log.Debug("connected", "host", name, "sudo", c.sudo.mode)
	return c, nil
}

// String names the host: its hostname from the inventory, else its address.
func (c *Conn) String() string { return c.name }

// Close ends the connection.
func (c *Conn) Close() error {
	if err := c.t.close(); err != nil {
		return fmt.Errorf("%s: closing the connection: %w", c.name, err)
	}
	return nil
}

// Run runs cmd as the login user and returns its stdout exactly as written.
func (c *Conn) Run(ctx context.Context, cmd string, opts ...RunOption) (string, error) {
	return c.exec(ctx, cmd, false, Apply(opts))
}

// Sudo runs cmd as root (see SudoMode) and returns its stdout.
func (c *Conn) Sudo(ctx context.Context, cmd string, opts ...RunOption) (string, error) {
	if c.sudo.err != nil {
		return "", c.sudo.err
	}
	return c.exec(ctx, cmd, true, Apply(opts))
}

// stderrTail is how much of a failed command's stderr an ExitError keeps.
const stderrTail = 16 << 10

func (c *Conn) exec(ctx context.Context, cmd string, asRoot bool, o RunOptions) (string, error) {
	line, stdin := cmd, o.Stdin
	// the sudo password is masked everywhere, not only in Sudo's output
	secrets := append(slices.Clone(o.Redact), c.sudo.password)
	if asRoot {
		line, stdin = c.sudo.wrap(cmd, stdin)
	}
	limit := o.MaxOutput
	if limit <= 0 {
		limit = MaxOutput
	}
	// a command over its bound is stopped as a cancelled one is: its
	// session closed, its process group killed
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var buf bytes.Buffer
	stdout := &limitWriter{w: &buf, max: limit, over: stop}
	if o.Stdout != nil {
		stdout = &limitWriter{w: o.Stdout, max: -1, over: stop}
	}
	tail := &tailBuffer{max: stderrTail}
	pg := newPGIDSniffer(tail)
	stderr := &limitWriter{w: pg, max: MaxOutput, over: stop}
	start := time.Now()
	err := c.t.run(runCtx, pg.wrap(line), stdin, stdout, stderr)
	outOver, errOver := stdout.done(), stderr.done()
	pg.flush()
	if err != nil && runCtx.Err() != nil && pg.pgid() > 0 && !o.noKill {
		c.killGroup(ctx, pg.pgid(), asRoot)
	}
	shown := redact(cmd, secrets)
	if outOver || errOver {
		ol := &OutputLimitError{Host: c.name, Cmd: summary(shown), Stream: "stdout", Limit: limit}
		if errOver {
			ol.Stream, ol.Limit = "stderr", MaxOutput
		}
		err = ol
	}
	c.log.Debug("command", "host", c.name, "cmd", shown, "sudo", asRoot,
		"duration", time.Since(start).Round(time.Millisecond), "error", errString(err, secrets))
	var st *exitStatus
	var ol *OutputLimitError
	switch {
	case err == nil:
		return buf.String(), nil
	case errors.As(err, &ol):
		return "", err
	case errors.As(err, &st):
		return buf.String(), &ExitError{Host: c.name, Cmd: shown, Code: st.code, Signal: st.signal,
			Stderr: redact(strings.TrimSpace(tail.String()), secrets)}
	case ctx.Err() != nil:
		return buf.String(), fmt.Errorf("%s: `%s`: %w", c.name, shown, ctx.Err())
	}
	// transport errors carry no command text or stdin, so nothing to mask
	return buf.String(), fmt.Errorf("%s: `%s`: %w", c.name, shown, err)
}

func errString(err error, secrets []string) string {
	if err == nil {
		return ""
	}
	return redact(err.Error(), secrets)
}

// getenv reads a variable, "" when unset.
func (o ConnectOptions) getenv(name string) string {
	v, _ := o.LookupEnv(name)
	return v
}
