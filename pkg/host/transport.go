package host

import (
	"context"
	"fmt"
	"io"
	"time"
)

// transport runs command lines on one machine: the built-in SSH client, the
// system ssh binary, or /bin/sh here.
type transport interface {
	// run runs line in the login user's shell and waits for it. A command
	// that ran and exited non-zero returns *exitStatus. Cancelling ctx
	// stops the command on the host, not just the wait for it.
	run(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) error
	// close releases the connection.
	close() error
}

// exitStatus is a command that ran and did not exit 0.
type exitStatus struct {
	code   int
	signal string // set when the command was killed by a signal
}

func (e *exitStatus) Error() string {
	if e.signal != "" {
		return fmt.Sprintf("killed by signal %s", e.signal)
	}
	return fmt.Sprintf("exit status %d", e.code)
}

// killGrace is how long a cancelled command has between SIGTERM and
// SIGKILL. A variable so that a test of a host that never answers need
// not wait it out.
var killGrace = 3 * time.Second
