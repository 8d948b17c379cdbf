package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Shell opens an interactive root shell on a host of f with OpenSSH,
// checking the host key against the fleet's known_hosts.
func Shell(ctx context.Context, f *fleet.Fleet, host string) error {
	h, err := f.Host(host)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "ssh", fleet.SSHArgs(f, h, fleet.UserRoot)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != 255 {
			return nil // the shell's own exit status: not a harness failure
		}
		return fmt.Errorf("%s: ssh: %w", host, err)
	}
	return nil
}
