package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
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
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail(stderr.String(), 800))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// tail returns at most the last n bytes of s, trimmed, for error messages.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
