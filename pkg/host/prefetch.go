package host

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Prefetch sends cmds, the Sudo commands a caller is about to send in
// turn (a converged host's reads), to the host in one round trip, and
// returns a Runner over r that answers each of them once, exactly as the
// host did, instead of asking again.
//
// The answers hold only while the host is as they found it, so the first
// command that is not one of them (a write, or a read that was not
// foreseen), a Run, an SFTP session, or a command with stdin, a streamed
// stdout or secrets to mask, drops every answer left: from then on each
// command goes to the host, as it would have without Prefetch. An answer
// serves one call, so a command sent again (a re-read after another host
// wrote a file here) asks the host again.
//
// Prefetch is only an optimisation: a batch that fails or reads wrong,
// fewer than two commands, or a cancelled ctx leave r to answer
// everything.
func Prefetch(ctx context.Context, r Runner, cmds []string) Runner {
	if len(cmds) < 2 || ctx.Err() != nil {
		return r
	}
	out, err := r.Sudo(ctx, Script(BatchReadBody, cmds...), WithMaxOutput(MaxOutput))
	if err != nil {
		return r
	}
	res, err := parseBatch(out, len(cmds))
	if err != nil {
		return r
	}
	p := &prefetched{inner: r}
	for i, c := range cmds {
		p.answers = append(p.answers, answer{cmd: c, res: res[i]})
	}
	if o, ok := r.(SFTPOpener); ok {
		return &prefetchedSFTP{prefetched: p, opener: o}
	}
	return p
}

// prefetched is Prefetch's Runner.
type prefetched struct {
	inner   Runner
	mu      sync.Mutex
	answers []answer
}

type answer struct {
	cmd string
	res BatchResult
}

var _ Runner = (*prefetched)(nil)

// String implements Runner.
func (p *prefetched) String() string { return p.inner.String() }

// Unwrap returns the runner the answers came from.
func (p *prefetched) Unwrap() Runner { return p.inner }

// Run implements Runner: the login user's commands are not prefetched.
func (p *prefetched) Run(ctx context.Context, cmd string, opts ...RunOption) (string, error) {
	p.drop()
	return p.inner.Run(ctx, cmd, opts...)
}

// Sudo implements Runner.
func (p *prefetched) Sudo(ctx context.Context, cmd string, opts ...RunOption) (string, error) {
	if out, err, ok := p.take(ctx, cmd, Apply(opts)); ok {
		return out, err
	}
	return p.inner.Sudo(ctx, cmd, opts...)
}

// Prefetched takes r's prefetched answer to cmd, as Sudo would, when r is
// a Runner from Prefetch holding one; ok=false otherwise, and nothing is
// sent or dropped. A caller with a read and a write in one command (check,
// and fix when wrong) prefetches the read alone and, when this finds it
// wrong or unknown, sends the command as before.
func Prefetched(r Runner, cmd string) (out string, err error, ok bool) {
	var p *prefetched
	switch w := r.(type) {
	case *prefetched:
		p = w
	case *prefetchedSFTP:
		p = w.prefetched
	default:
		return "", nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.ContainsFunc(p.answers, func(a answer) bool { return a.cmd == cmd }) {
		return "", nil, false
	}
	return p.takeLocked(context.Background(), cmd, RunOptions{})
}

// take returns the prefetched answer for cmd, ok=false (and every answer
// dropped) when there is none the host's own answer would equal.
func (p *prefetched) take(ctx context.Context, cmd string, o RunOptions) (string, error, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(ctx, cmd, o)
}

func (p *prefetched) takeLocked(ctx context.Context, cmd string, o RunOptions) (string, error, bool) {
	i := slices.IndexFunc(p.answers, func(a answer) bool { return a.cmd == cmd })
	if i < 0 || ctx.Err() != nil || o.Stdin != nil || o.Stdout != nil || len(o.Redact) > 0 {
		p.answers = nil
		return "", nil, false
	}
	res := p.answers[i].res
	limit := o.MaxOutput
	if limit <= 0 {
		limit = MaxOutput
	}
	// over its bound, or killed (128+signal): the host says how it fails
	if int64(len(res.Stdout)) > limit || res.Code > 125 {
		p.answers = nil
		return "", nil, false
	}
	p.answers = slices.Delete(p.answers, i, i+1)
	if res.Code != 0 {
		return res.Stdout, &ExitError{Host: p.inner.String(), Cmd: cmd, Code: res.Code, Stderr: strings.TrimSpace(tail(res.Stderr))}, true
	}
	return res.Stdout, nil, true
}

// tail keeps the end of stderr, as much as a Conn's ExitError keeps.
func tail(s string) string {
	if len(s) > stderrTail {
		return s[len(s)-stderrTail:]
	}
	return s
}

func (p *prefetched) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers = nil
}

// prefetchedSFTP is a prefetched Runner over one that opens SFTP
// sessions: Upload asserts SFTPOpener, so the wrapper keeps offering it.
type prefetchedSFTP struct {
	*prefetched
	opener SFTPOpener
}

var _ SFTPOpener = (*prefetchedSFTP)(nil)

// OpenSFTP implements SFTPOpener: a session writes, so the answers go.
func (p *prefetchedSFTP) OpenSFTP(ctx context.Context) (*SFTP, error) {
	p.drop()
	return p.opener.OpenSFTP(ctx)
}
