package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// command runs a host tool (ip, debootstrap, systemd-nspawn, ...) and returns
// its trimmed stdout. Errors name the full command line and carry the tail of
// stderr, because "exit status 2" from `ip` on its own tells nobody anything.
func command(ctx context.Context, name string, args ...string) (string, error) {
	return commandInput(ctx, "", name, args...)
}

// commandInput is command with stdin fed from input.
func commandInput(ctx context.Context, input, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, fleet.Tail(stderr.String(), 800))
	}
	return strings.TrimSpace(stdout.String()), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
