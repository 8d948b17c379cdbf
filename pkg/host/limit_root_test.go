package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// allocated runs fn and returns how many bytes the heap handed out
// meanwhile: a bound on what fn held, whatever the collector freed.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// returnsWithin fails the test when fn has not returned after d, rather
// than hanging it.
func returnsWithin(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
	}
}

// TestOutputIsBounded: a command that prints without end is stopped at
// the bound with an error naming host and command, and killed on the host.
func TestOutputIsBounded(t *testing.T) {
	f := sshd(t)
	n := 0
	cases := []struct {
		how, stream string
		asRoot      bool
	}{{"", "stdout", false}, {"", "stdout", true}, {" >&2", "stderr", false}}
	for name, c := range f.modes(t) {
		for _, tc := range cases {
			n++
			marker := fmt.Sprintf("yes cargoship-bound-%d", n)
			t.Run(fmt.Sprintf("%s %s root=%v", name, tc.stream, tc.asRoot), func(t *testing.T) {
				// a deadline only so that a failing test ends
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var err error
				used := allocated(func() {
					if tc.asRoot {
						_, err = c.Sudo(ctx, marker+tc.how)
					} else {
						_, err = c.Run(ctx, marker+tc.how)
					}
				})
				var ol *OutputLimitError
				if !errors.As(err, &ol) || ol.Stream != tc.stream {
					t.Fatalf("err = %v; want an OutputLimitError on %s", err, tc.stream)
				}
				if want := c.String() + ": `" + marker + tc.how + "` printed more than 16 MiB on " + tc.stream; !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v; want %q", err, want)
				}
				if used > 200<<20 {
					t.Errorf("the run allocated %d MiB; want about the 16 MiB bound", used>>20)
				}
				waitFor(t, func() bool { return !running(marker) }, marker+" to be killed")
			})
		}
	}
}

// TestDeadlineStopsAStream: a deadline stops a command mid-stream, the
// stream going to the caller's writer, and the command is killed.
func TestDeadlineStopsAStream(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for name, c := range f.modes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			marker := "yes cargoship-deadline-" + name
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			returnsWithin(t, 15*time.Second, func() {
				_, err := c.Run(ctx, marker, WithStdout(io.Discard))
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v; want the deadline", err)
				}
			})
			waitFor(t, func() bool { return !running(marker) }, marker+" to be killed")
		})
	}
}

// TestHostileHostAnswersIDWithZeros: Connect's first command is answered
// with 3 GB; Connect stops at the probe's bound, with bounded memory.
func TestHostileHostAnswersIDWithZeros(t *testing.T) {
	f := sshd(t)
	home := "/home/" + userHostile
	if err := os.WriteFile(filepath.Join(home, "zeros"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(home, "zeros"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	used := allocated(func() {
		returnsWithin(t, 15*time.Second, func() { _, err = Connect(ctx, f.sshHost(userHostile), f.opts(nil, nil)) })
	})
	var ol *OutputLimitError
	if !errors.As(err, &ol) || !strings.Contains(err.Error(), "`id -u && id -un` printed more than 64 KiB on stdout") {
		t.Errorf("Connect = %v; want it stopped at the probe's bound", err)
	}
	if used > 64<<20 {
		t.Errorf("Connect allocated %d MiB", used>>20)
	}
}

// TestHostileHostAnswersWithZerosOnStderr: the same on stderr, which the
// system ssh binary's login check reads too.
func TestHostileHostAnswersWithZerosOnStderr(t *testing.T) {
	f := sshd(t)
	flag := filepath.Join("/home", userHostile, "errzeros")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(flag)
	for name, h := range map[string]*v1alpha1.Host{"ssh": f.sshHost(userHostile), "openSSH": f.openSSHHost(userHostile)} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var err error
			used := allocated(func() {
				returnsWithin(t, 15*time.Second, func() { _, err = Connect(ctx, h, f.opts(nil, nil)) })
			})
			var ol *OutputLimitError
			if !errors.As(err, &ol) || ol.Stream != "stderr" {
				t.Errorf("Connect = %v; want it stopped at a bound on stderr", err)
			}
			if used > 64<<20 {
				t.Errorf("Connect allocated %d MiB", used>>20)
			}
		})
	}
}

// TestDeadlineStopsAHostThatNeverCloses: the command ignores every signal
// and never exits, so sshd never closes the channel; the deadline must
// still end the call.
func TestDeadlineStopsAHostThatNeverCloses(t *testing.T) {
	f := sshd(t)
	// the call waits out the grace for a channel that never closes, and
	// the kill after it the grace for a group that ignores TERM
	withKillGrace(t, 500*time.Millisecond)
	c := connect(t, f.sshHost(userHostile), f.opts(nil, nil))
	pidFile := filepath.Join("/home", userHostile, "stuck.pid")
	_ = os.Remove(pidFile)
	t.Cleanup(func() {
		// the stuck command is this test's own: end it by its group
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	returnsWithin(t, 20*time.Second, func() {
		_, err := c.Run(ctx, "cargoship-hostile-stuck")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v; want the deadline", err)
		}
	})
	if _, err := os.Stat(pidFile); errors.Is(err, fs.ErrNotExist) {
		t.Error("the stuck command never ran")
	}
	t.Logf("returned after %s", time.Since(start).Round(time.Millisecond))
}

// TestReadFileIsBounded: a file over the bound, or one without end, is an
// error, not a buffer the size of the file.
func TestReadFileIsBounded(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxReadFile+1); err != nil {
		t.Fatal(err)
	}
	ten := filepath.Join(dir, "ten")
	if err := os.WriteFile(ten, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// a deadline only so that a failing test ends: a loaded
			// machine (CI's) takes seconds over 16 MiB
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, p := range []string{big, "/dev/zero"} {
				if _, err := ReadFile(ctx, c, p); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
					t.Errorf("ReadFile(%s) = %v; want larger than 16 MiB", p, err)
				}
			}
			if b, err := ReadFileLimit(ctx, c, ten, 10); err != nil || string(b) != "0123456789" {
				t.Errorf("ReadFileLimit(10) = %q, %v", b, err)
			}
			if _, err := ReadFileLimit(ctx, c, ten, 9); err == nil || !strings.Contains(err.Error(), "larger than 9 bytes") {
				t.Errorf("ReadFileLimit(9) = %v; want larger than 9 bytes", err)
			}
		})
	}
}
