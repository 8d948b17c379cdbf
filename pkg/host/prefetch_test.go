package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// shRunner runs commands in this machine's /bin/sh as the Conn's transport
// would, counting them.
type shRunner struct {
	mu    sync.Mutex
	cmds  []string
	reply func(cmd string) (string, bool) // answers a command itself when ok
}

func (s *shRunner) String() string { return "sh" }

func (s *shRunner) Run(ctx context.Context, cmd string, opts ...RunOption) (string, error) {
	return s.Sudo(ctx, cmd, opts...)
}

func (s *shRunner) Sudo(ctx context.Context, cmd string, _ ...RunOption) (string, error) {
	s.mu.Lock()
	s.cmds = append(s.cmds, cmd)
	s.mu.Unlock()
	if s.reply != nil {
		if out, ok := s.reply(cmd); ok {
			return out, nil
		}
	}
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), &ExitError{Host: "sh", Cmd: cmd, Code: ee.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	return string(out), err
}

func (s *shRunner) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cmds)
}

// TestPrefetchAnswersAsTheHost checks that prefetched reads, a missing
// file and a failing command among them, answer exactly as the host does,
// in one round trip.
func TestPrefetchAnswersAsTheHost(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "it's a file")
	content := "bytes\x00\xff\n\n\n"
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	failing := Script(`echo out; echo "why it failed" >&2; exit 3`)
	cmds := []string{ReadFileCommand(f), ReadFileCommand(missing), FileSHA256Command(f), failing, WriteFileProbe(f)}

	live := &shRunner{}
	ctx := context.Background()
	sh := &shRunner{}
	r := Prefetch(ctx, sh, cmds)
	if sh.calls() != 1 {
		t.Fatalf("prefetch sent %d commands, want 1", sh.calls())
	}
	for _, c := range cmds {
		wantOut, wantErr := live.Sudo(ctx, c)
		gotOut, gotErr := r.Sudo(ctx, c)
		if gotOut != wantOut {
			t.Errorf("%s: stdout %q, want %q", c, gotOut, wantOut)
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: error %v, want %v", c, gotErr, wantErr)
		}
	}
	if sh.calls() != 1 {
		t.Errorf("answering sent %d more commands", sh.calls()-1)
	}
	data, err := ReadFile(ctx, Prefetch(ctx, sh, []string{ReadFileCommand(f), ReadFileCommand(missing)}), f)
	if err != nil || string(data) != content {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if _, err := ReadFile(ctx, Prefetch(ctx, sh, []string{ReadFileCommand(missing), ReadFileCommand(f)}), missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}

// TestPrefetchGoesLiveOnceTheHostMayHaveChanged checks that an answer
// serves one call, and that the first command not foreseen drops the rest.
func TestPrefetchGoesLiveOnceTheHostMayHaveChanged(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	sh := &shRunner{}
	r := Prefetch(ctx, sh, []string{ReadFileCommand(a), ReadFileCommand(b)})
	if _, err := r.Sudo(ctx, ReadFileCommand(a)); err != nil {
		t.Fatal(err)
	}
	if n := sh.calls(); n != 1 {
		t.Fatalf("%d calls", n)
	}
	// a write nobody foresaw: b's answer is stale now
	if _, err := r.Sudo(ctx, Script(`printf new > "$1"`, b)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(ctx, r, b)
	if err != nil || string(got) != "new" {
		t.Errorf("b after the write = %q, %v", got, err)
	}
	if n := sh.calls(); n != 3 {
		t.Errorf("%d calls, want 3 (the batch, the write, the re-read)", n)
	}

	sh = &shRunner{}
	r = Prefetch(ctx, sh, []string{ReadFileCommand(a), ReadFileCommand(b)})
	for range 2 {
		if _, err := ReadFile(ctx, r, a); err != nil {
			t.Fatal(err)
		}
	}
	if n := sh.calls(); n != 2 {
		t.Errorf("reading a twice made %d calls, want 2 (the batch, then the host again)", n)
	}
}

// TestPrefetchFallsBack checks that a batch answered wrongly leaves every
// command to the host.
func TestPrefetchFallsBack(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sh := &shRunner{reply: func(cmd string) (string, bool) {
		return "cs-out\n", strings.Contains(cmd, "cs-end")
	}}
	r := Prefetch(ctx, sh, []string{ReadFileCommand(a), FileSHA256Command(a)})
	if got, err := ReadFile(ctx, r, a); err != nil || string(got) != "x" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	if n := sh.calls(); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestBatchReplyParses(t *testing.T) {
	in := []BatchResult{{Stdout: "a\n\n", Code: 0}, {Stderr: "no", Code: 44}, {}}
	got, err := parseBatch(BatchReply(in), len(in))
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if got[i] != in[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], in[i])
		}
	}
	if _, err := parseBatch(BatchReply(in), 2); err == nil {
		t.Error("an answer with a command too many parsed")
	}
}
