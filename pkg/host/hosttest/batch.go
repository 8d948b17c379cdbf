package hosttest

import (
	"context"
	"errors"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// batchCommands returns the commands of a host.Prefetch batch, ok=false
// for any other command.
func batchCommands(c Call) ([]string, bool) {
	body, args, ok := c.Script()
	if !ok || body != host.BatchReadBody || !c.Sudo {
		return nil, false
	}
	return args, true
}

// batch answers a host.Prefetch batch as a host runs it: each command as
// the Fake answers it alone, stdin closed. The batch is recorded as one
// call holding its commands. A command failing other than by exiting (a
// transport error a test scripted) fails the batch with that error.
func (f *Fake) batch(ctx context.Context, call Call, cmds []string) (string, error) {
	for _, c := range cmds {
		call.Batch = append(call.Batch, Call{Cmd: c, Sudo: true})
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	res := make([]host.BatchResult, 0, len(cmds))
	for _, sub := range call.Batch {
		out, err := f.answer(ctx, sub, nil, host.RunOptions{})
		var ee *host.ExitError
		switch {
		case errors.As(err, &ee):
			res = append(res, host.BatchResult{Stdout: out, Stderr: ee.Stderr, Code: ee.Code})
		case err != nil:
			return "", err
		default:
			res = append(res, host.BatchResult{Stdout: out})
		}
	}
	return host.BatchReply(res), nil
}
