package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// SudoMode is how a connection runs commands as root.
type SudoMode string

// The ways to root, found once at connect.
const (
	// SudoRoot: the login user is root; commands run as they are.
	SudoRoot SudoMode = "root"
	// SudoNoPassword: `sudo -n` works without a password.
	SudoNoPassword SudoMode = "sudo"
	// SudoPassword: sudo -S takes the password from the variable the
	// host's sudoPasswordEnv names, on a stdin of its own.
	SudoPassword SudoMode = "sudo-password"
	// SudoNone: no way to root; Sudo fails with the reason.
	SudoNone SudoMode = "none"
)

// sudoState is what detectSudo found.
type sudoState struct {
	mode     SudoMode
	password string // SudoPassword only; never logged
	err      error  // SudoNone only
}

// wrap turns cmd into a command line that runs it as root, and the stdin
// to feed it. With a password, stdin starts with the password line and
// sudoPasswordScript keeps the two apart.
func (s sudoState) wrap(cmd string, stdin io.Reader) (string, io.Reader) {
	switch s.mode {
	case SudoNoPassword:
		return "sudo -n -- sh -c " + shell.Quote(cmd), stdin
	case SudoPassword:
		body := sudoPasswordNoInput
		pw := io.Reader(strings.NewReader(s.password + "\n"))
		if stdin != nil {
			body = sudoPasswordInput
			pw = io.MultiReader(pw, stdin)
		}
		return Script(body, cmd), pw
	}
	return cmd, stdin
}

// The password never shares a stream with the command. sudo -S reads it
// from its own stdin, a pipe holding only the password line, and the
// command's stdin is the rest of ours, through a FIFO (sudo closes every
// other descriptor), or /dev/null. Feeding both through one stream put the
// password into the command's input whenever sudo did not ask for it (a
// NOPASSWD rule for the command): WriteFile wrote it into the file.
// sudo -S works whatever PAM's prompt, and -k makes every command ask,
// as timestamp_timeout=0 does, so no cached credential changes how a
// command runs. read and printf are builtins: the password is on no
// command line.
const (
	sudoPasswordRun = `printf '%s\n' "$pw" | sudo -k -S -p '' -- sh -c 'exec sh -c "$2" < "$1"' sh`

	sudoPasswordNoInput = `IFS= read -r pw || exit 1
` + sudoPasswordRun + ` /dev/null "$1"`

	sudoPasswordInput = `IFS= read -r pw || exit 1
d=$(mktemp -d) || exit 1
trap 'rm -rf -- "$d"' EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM
mkfifo -m 600 "$d/in" || exit 1
exec 3<&0
cat <&3 > "$d/in" 3<&- &
c=$!
` + sudoPasswordRun + ` "$d/in" "$1" 3<&-
rc=$?
kill "$c" 2>/dev/null
exit "$rc"`
)

// probeOutput bounds what the connect-time probes may print.
const probeOutput = 64 << 10

// SudoMode reports how Sudo reaches root on this host and, for SudoNone,
// why it cannot: the validate phase reports it.
func (c *Conn) SudoMode() (SudoMode, error) { return c.sudo.mode, c.sudo.err }

// detectSudo sets c.sudo. It returns an error only when the host could not
// be asked at all; a host without a way to root gets SudoNone.
func (c *Conn) detectSudo(ctx context.Context, passwordEnv string, getenv func(string) string) error {
	// a host answering with more than a uid and a name is not one to wait on
	probe := RunOptions{MaxOutput: probeOutput}
	out, err := c.exec(ctx, "id -u && id -un", false, probe)
	if err != nil {
		return fmt.Errorf("finding the login user: %w", err)
	}
	uid, user, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if uid == "0" {
		c.sudo = sudoState{mode: SudoRoot}
		return nil
	}
	none := func(format string, args ...any) error {
		c.sudo = sudoState{mode: SudoNone, err: fmt.Errorf("host %s: "+format, append([]any{c.name}, args...)...)}
		return nil
	}
	// the probe has the commands' shape: a rule that lets "true" through
	// without a password says nothing about "sh -c ..."
	_, err = c.exec(ctx, "sudo -n -- sh -c true", false, probe)
	var ee *ExitError
	switch {
	case err == nil:
		c.sudo = sudoState{mode: SudoNoPassword}
		return nil
	case !errors.As(err, &ee):
		return fmt.Errorf("checking sudo: %w", err)
	case ee.Code == 127:
		return none("user %s is not root and sudo is not installed", user)
	case strings.Contains(ee.Stderr, "tty"):
		return none("sudo wants a terminal (Defaults requiretty); allow %s without one (Defaults:%s !requiretty): %s", user, user, ee.Stderr)
	case passwordEnv == "":
		return none("sudo needs a password for %s: set sudoPasswordEnv on the host to the name of an environment variable holding it, or allow NOPASSWD sudo", user)
	}
	pw := getenv(passwordEnv)
	switch {
	case pw == "":
		return none("sudo needs a password for %s, but $%s (the host's sudoPasswordEnv) is not set", user, passwordEnv)
	case strings.ContainsAny(pw, "\r\n"):
		return none("$%s (sudoPasswordEnv) holds a line break; sudo reads the password as one line", passwordEnv)
	}
	try := sudoState{mode: SudoPassword, password: pw}
	line, stdin := try.wrap("true", nil)
	if _, err := c.exec(ctx, line, false, RunOptions{Stdin: stdin, Redact: []string{pw}, MaxOutput: probeOutput}); err != nil {
		if !errors.As(err, &ee) {
			return fmt.Errorf("checking sudo: %w", err)
		}
		return none("sudo did not accept the password in $%s for %s: %s", passwordEnv, user, ee.Stderr)
	}
	c.sudo = try
	return nil
}
