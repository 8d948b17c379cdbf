package host

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
)

// localTransport runs commands with /bin/sh on the machine cargoship runs on.
type localTransport struct{}

func (localTransport) run(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// its own process group, so cancelling reaches the command's children
	// too; TERM first so sudo can pass it on to the command it runs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &exitStatus{code: -1, signal: signalName(ws.Signal())}
		}
		return &exitStatus{code: ee.ExitCode()}
	}
	return err
}

func (localTransport) close() error { return nil }

// signalName names sig the way SSH does: "TERM", "KILL".
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGPIPE:
		return "PIPE"
	}
	return sig.String()
}
