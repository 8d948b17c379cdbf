package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/phase"
)

// operator is one cargoship command run as a subprocess, with its JSON log
// read line by line as it comes.
type operator struct {
	name   string
	cmd    *exec.Cmd
	book   *logbook
	stdout bytes.Buffer
	done   chan struct{} // closed once it exited and its log was read
	err    error         // how it exited, once done
}

// id is the run id the command writes into lock files: this machine's
// hostname and the process id (docs/apply.md, The lock).
func (o *operator) id() string {
	h, _ := os.Hostname()
	return h + "-" + strconv.Itoa(o.cmd.Process.Pid)
}

// startApply starts `cargoship apply` of the world's package on its
// inventory, with the given extra flags. The command runs in a directory of
// its own with HOME there, so no settings file of this machine is read.
func (w *world) startApply(t *testing.T, name string, flags ...string) *operator {
	t.Helper()
	home := t.TempDir()
	// --fanout=false: the faults are in the operator's own transfers
	args := append([]string{"--log-format", "json", "apply", w.pkg.Path, "--config", w.inventory, "--confirm", "--fanout=false"}, flags...)
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = home
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"TMPDIR=" + os.TempDir(), "SSH_KNOWN_HOSTS=" + w.fleet.KnownHostsPath,
		phase.LockStaleEnv + "=" + lockStale.String(),
	}
	o := &operator{name: name, cmd: cmd, book: newLogbook(), done: make(chan struct{})}
	cmd.Stdout = &o.stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Logf("%s: cargoship %s (pid %d)", name, strings.Join(args, " "), cmd.Process.Pid)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			o.book.add(parseLine(sc.Text()))
		}
		o.err = cmd.Wait()
		close(o.done)
	}()
	t.Cleanup(func() {
		select {
		case <-o.done:
		default:
			_ = cmd.Process.Kill()
			<-o.done
		}
		o.logAll(t)
	})
	return o
}

// parseLine reads one JSON log line; anything else is kept raw.
func parseLine(line string) entry {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber() // byte counts as written, not as floats
	if err := d.Decode(&m); err != nil {
		return entry{"msg": line, "raw": "true"}
	}
	e := entry{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			e[k] = s
		} else {
			e[k] = fmt.Sprint(v)
		}
	}
	return e
}

// logAll puts the command's log and summary in the test log.
func (o *operator) logAll(t *testing.T) {
	t.Helper()
	var b strings.Builder
	for _, e := range o.book.all(func(entry) bool { return true }) {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	t.Logf("%s exited (%v); its log:\n%s\nits summary:\n%s", o.name, o.err, b.String(), o.stdout.String())
}

// waitFor waits until the command logs a matching line.
func (o *operator) waitFor(t *testing.T, timeout time.Duration, what string, match func(entry) bool) entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	e, err := o.book.wait(ctx, o.done, match)
	if err != nil {
		t.Fatalf("%s: waiting %s for %s: %v (exit: %v)", o.name, timeout, what, err, o.exitErr())
	}
	return e
}

// exitErr is how the command exited, or nil while it runs.
func (o *operator) exitErr() error {
	select {
	case <-o.done:
		return o.err
	default:
		return nil
	}
}

// kill9 kills the command outright, as an operator's machine dying would:
// no clean-up runs.
func (o *operator) kill9(t *testing.T) {
	t.Helper()
	if err := o.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("%s: kill -9: %v", o.name, err)
	}
	<-o.done
	var ee *exec.ExitError
	if !errors.As(o.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("%s ended with %v before the kill reached it", o.name, o.err)
	}
	t.Logf("%s: killed with SIGKILL", o.name)
}

// wait waits for the command to end and returns how it exited.
func (o *operator) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-o.done:
		return o.err
	case <-time.After(timeout):
		t.Fatalf("%s still runs after %s", o.name, timeout)
		return nil
	}
}
