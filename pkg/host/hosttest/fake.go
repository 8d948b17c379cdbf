package hosttest

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Fake is a scripted host. The first reply whose match is a substring of
// a command line answers it. A command no reply matches goes to Else when
// it is set (a Local, so the files a test prepared are really read and
// written), fails with exit 127 when Strict is set, and otherwise gets ""
// and no error. Every command is recorded.
type Fake struct {
	Name   string
	Else   host.Runner
	Strict bool

	mu      sync.Mutex
	replies []reply
	calls   []Call
}

var _ host.Runner = (*Fake)(nil)

type reply struct {
	match  string
	answer func(Call) (string, error)
}

// Call is one command a Fake received.
type Call struct {
	Cmd   string
	Sudo  bool
	Stdin string
	// Batch are the commands of a host.Prefetch batch, each answered as
	// if sent alone; the batch is one Call, one round trip.
	Batch []Call
}

// Args splits the command line into the words a shell would pass on.
func (c Call) Args() []string { return Words(c.Cmd) }

// Script returns the body and arguments of a `sh -c BODY sh ARGS...` line
// (host.Script), ok=false for any other command.
func (c Call) Script() (body string, args []string, ok bool) {
	w := c.Args()
	if len(w) < 4 || w[0] != "sh" || w[1] != "-c" {
		return "", nil, false
	}
	return w[2], w[4:], true
}

// On answers commands containing match with out.
func (f *Fake) On(match, out string) *Fake {
	return f.Handle(match, func(Call) (string, error) { return out, nil })
}

// Fail fails commands containing match with exit code and stderr.
func (f *Fake) Fail(match string, code int, stderr string) *Fake {
	return f.Handle(match, func(c Call) (string, error) {
		return "", &host.ExitError{Host: f.String(), Cmd: c.Cmd, Code: code, Stderr: stderr}
	})
}

// Handle answers commands containing match with what answer returns: a
// stateful model of a tool ("" matches every command).
func (f *Fake) Handle(match string, answer func(Call) (string, error)) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = append(f.replies, reply{match, answer})
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
	return f.do(ctx, cmd, false, opts)
}

// Sudo implements host.Runner.
func (f *Fake) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return f.do(ctx, cmd, true, opts)
}

func (f *Fake) do(ctx context.Context, cmd string, sudo bool, opts []host.RunOption) (string, error) {
	o := host.Apply(opts)
	var stdin []byte
	if o.Stdin != nil {
		stdin, _ = io.ReadAll(o.Stdin)
	}
	call := Call{Cmd: cmd, Sudo: sudo, Stdin: string(stdin)}
	if sub, ok := batchCommands(call); ok {
		return f.batch(ctx, call, sub)
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	return f.answer(ctx, call, opts, o)
}

// answer answers one command by the replies, Else or Strict.
func (f *Fake) answer(ctx context.Context, call Call, opts []host.RunOption, o host.RunOptions) (string, error) {
	cmd, sudo, stdin := call.Cmd, call.Sudo, []byte(call.Stdin)
	f.mu.Lock()
	var answer func(Call) (string, error)
	for _, r := range f.replies {
		if strings.Contains(cmd, r.match) {
			answer = r.answer
			break
		}
	}
	f.mu.Unlock()
	switch {
	case answer != nil:
	case f.Else != nil:
		rest := slices.Clone(opts)
		if o.Stdin != nil { // read above: pass on what was read
			rest = append(rest, host.WithStdin(bytes.NewReader(stdin)))
		}
		if sudo {
			return f.Else.Sudo(ctx, cmd, rest...)
		}
		return f.Else.Run(ctx, cmd, rest...)
	case f.Strict:
		return "", &host.ExitError{Host: f.String(), Cmd: cmd, Code: 127, Stderr: "hosttest.Fake: no reply for this command"}
	default:
		return "", nil
	}
	out, err := answer(call)
	if o.Stdout != nil {
		// as a host.Runner does: stdout streams to the writer instead
		_, _ = io.WriteString(o.Stdout, out)
		return "", err
	}
	return out, err
}

// Calls returns the commands received, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Commands returns the command lines received, in order.
func (f *Fake) Commands() []string {
	calls := f.Calls()
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Cmd
	}
	return out
}

// Ran reports whether any command line, or one in a batch, contains s.
func (f *Fake) Ran(s string) bool {
	for _, c := range f.Calls() {
		if strings.Contains(c.Cmd, s) {
			return true
		}
		for _, b := range c.Batch {
			if strings.Contains(b.Cmd, s) {
				return true
			}
		}
	}
	return false
}
