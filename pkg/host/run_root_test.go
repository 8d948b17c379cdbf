package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func TestRunExitError(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for name, c := range f.modes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := c.Run(context.Background(), "echo partial; echo oops >&2; exit 3")
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v; want *ExitError", err)
			}
			if ee.Code != 3 || ee.Stderr != "oops" || ee.Host != c.String() || out != "partial\n" {
				t.Errorf("got code %d stderr %q host %q stdout %q", ee.Code, ee.Stderr, ee.Host, out)
			}
		})
	}
}

func TestRunRedacts(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	const secret = "tok-3f9a1c"
	for name, c := range f.modes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var log syncBuffer
			c.log = f.opts(&log, nil).Log
			_, err := c.Sudo(context.Background(), "echo token "+secret+" >&2; exit 1", WithRedact(secret))
			if err == nil {
				t.Fatal("the command should fail")
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(log.String(), secret) {
				t.Errorf("the secret shows:\n%v\n%s", err, log.String())
			}
			if !strings.Contains(err.Error(), "token "+redactMark) {
				t.Errorf("error %q: want the secret masked, the rest kept", err)
			}
		})
	}
}

func TestRunStreamsStdout(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for name, c := range f.modes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			out, err := c.Run(context.Background(), "seq 1 100000", WithStdout(&buf))
			if err != nil || out != "" {
				t.Fatalf("Run = %q, %v", out, err)
			}
			want, _ := exec.Command("seq", "1", "100000").Output()
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("streamed %d bytes, want %d", buf.Len(), len(want))
			}
		})
	}
}

// TestCancelKillsTheCommand cancels a long sleep and checks it is gone
// from the host, for each mode, as the login user and through sudo.
func TestCancelKillsTheCommand(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	conns := map[string]*Conn{
		"ssh":       connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"openSSH":   connect(t, f.openSSHHost(userNoPW), f.opts(nil, nil)),
		"localhost": connect(t, localHost(), f.opts(nil, nil)),
	}
	h := f.sshHost(userPW)
	h.SudoPasswordEnv = "CSTEST_SUDO"
	conns["ssh, sudo -S"] = connect(t, h, f.opts(nil, map[string]string{"CSTEST_SUDO": f.password}))
	n := 4000
	for name, c := range conns {
		for _, asRoot := range []bool{false, true} {
			n++
			marker := fmt.Sprintf("sleep %d", n)
			t.Run(fmt.Sprintf("%s root=%v", name, asRoot), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					// a compound command: the shell stays, sleep is its child
					cmd := marker + "; echo never"
					var err error
					if asRoot {
						_, err = c.Sudo(ctx, cmd)
					} else {
						_, err = c.Run(ctx, cmd)
					}
					done <- err
				}()
				waitFor(t, func() bool { return running(marker) }, marker+" to start")
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v; want context.Canceled", err)
				}
				waitFor(t, func() bool { return !running(marker) }, marker+" to be killed")
			})
		}
	}
}

// running reports whether a process with exactly this command line runs.
func running(cmdline string) bool {
	return exec.Command("pgrep", "-x", "-f", cmdline).Run() == nil
}

// waitFor polls cond for up to 20s: the test waits on the host's state,
// it does not measure time.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// BenchmarkRun measures one command's round trip per mode.
func BenchmarkRun(b *testing.B) {
	f := sshd(b)
	for name, h := range map[string]*v1alpha1.Host{"ssh": f.sshHost(userNoPW), "openSSH": f.openSSHHost(userNoPW), "localhost": localHost()} {
		b.Run(name, func(b *testing.B) {
			c, err := Connect(context.Background(), h, f.opts(nil, nil))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for b.Loop() {
				if _, err := c.Run(context.Background(), "true"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStdinThroughput measures raw streaming into a command: the
// ceiling for Upload's cat path.
func BenchmarkStdinThroughput(b *testing.B) {
	f := sshd(b)
	const size = 32 << 20
	c, err := Connect(context.Background(), f.sshHost(userNoPW), f.opts(nil, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(size)
	for b.Loop() {
		if _, err := c.Run(context.Background(), "cat > /dev/null", WithStdin(io.LimitReader(zeros{}, size))); err != nil {
			b.Fatal(err)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
