package hosttest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host"
)

func TestMain(m *testing.M) {
	ServeTools(map[string]func([]string) int{
		"greet": func(args []string) int {
			fmt.Println("hello " + strings.Join(args, "|"))
			return len(args)
		},
	})
	os.Exit(m.Run())
}

// TestFakeRepliesAndRecords: the first matching reply wins, handlers see
// the call, stdout goes to WithStdout's writer as a real runner sends it,
// and every call is recorded with its stdin.
func TestFakeRepliesAndRecords(t *testing.T) {
	ctx := context.Background()
	seen := 0
	f := (&Fake{}).
		On("uname", "Linux\n").
		Fail("uname -x", 2, "bad option").
		Handle("sh -c", func(c Call) (string, error) {
			body, args, ok := c.Script()
			seen++
			return fmt.Sprintf("%v %q %q %s", ok, body, args, c.Stdin), nil
		})
	if out, err := f.Run(ctx, "uname -x"); out != "Linux\n" || err != nil {
		t.Errorf("first reply should win: %q %v", out, err)
	}
	out, err := f.Sudo(ctx, host.Script(`echo "$1"`, "a b"), host.WithStdin(strings.NewReader("in")))
	if want := `true "echo \"$1\"" ["a b"] in`; out != want || err != nil || seen != 1 {
		t.Errorf("handler: %q %v; want %q", out, err, want)
	}
	var buf strings.Builder
	if out, err := f.Run(ctx, "uname", host.WithStdout(&buf)); out != "" || err != nil || buf.String() != "Linux\n" {
		t.Errorf("WithStdout: returned %q, wrote %q, %v", out, buf.String(), err)
	}
	if out, err := f.Run(ctx, "anything else"); out != "" || err != nil {
		t.Errorf("no reply: %q %v", out, err)
	}
	calls := f.Calls()
	if len(calls) != 4 || !calls[1].Sudo || calls[1].Stdin != "in" || !f.Ran("anything") || f.Ran("nothing like it") {
		t.Errorf("calls = %+v", calls)
	}
	strict := &Fake{Strict: true}
	var ee *host.ExitError
	if _, err := strict.Run(ctx, "x"); !errors.As(err, &ee) || ee.Code != 127 {
		t.Errorf("strict: %v", err)
	}
}

// TestFakeElseReachesRealFiles: what no reply matches runs on Else, so the
// file helpers of pkg/host work on real files behind a scripted tool.
func TestFakeElseReachesRealFiles(t *testing.T) {
	ctx := context.Background()
	f := (&Fake{Else: &Local{}}).On("sysctl", "1\n")
	p := filepath.Join(t.TempDir(), "d", "f")
	if _, err := host.ReadFile(ctx, f, p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if changed, err := host.WriteFile(ctx, f, p, []byte("x\x00y"), 0o600, ""); err != nil || !changed {
		t.Fatalf("WriteFile: %v %v", changed, err)
	}
	if b, err := host.ReadFile(ctx, f, p); string(b) != "x\x00y" || err != nil {
		t.Errorf("ReadFile = %q %v", b, err)
	}
	if out, _ := f.Run(ctx, "sysctl -n x"); out != "1\n" {
		t.Errorf("reply = %q", out)
	}
	var ee *host.ExitError
	if _, err := f.Run(ctx, "echo oops >&2; exit 3"); !errors.As(err, &ee) || ee.Code != 3 || ee.Stderr != "oops" {
		t.Errorf("Else's error: %v", err)
	}
}

// TestLocalRewrite moves a host path under a temp directory, as a test of
// code with fixed paths does; the recorded call is the command as given.
func TestLocalRewrite(t *testing.T) {
	root := t.TempDir()
	l := &Local{Rewrite: func(cmd string) string { return strings.ReplaceAll(cmd, "/etc/rancher/", root+"/etc/rancher/") }}
	ctx := context.Background()
	if _, err := host.WriteFile(ctx, l, "/etc/rancher/k3s/config.yaml", []byte("a: b\n"), 0o600, ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/rancher/k3s/config.yaml")); string(b) != "a: b\n" || err != nil {
		t.Errorf("rewritten write: %q %v", b, err)
	}
	if calls := l.Calls(); len(calls) == 0 || strings.Contains(calls[0], root) {
		t.Errorf("calls = %q", calls)
	}
}

func TestToolsRunTheTestBinary(t *testing.T) {
	r := Tools(t, "greet")
	out, err := r.Run(context.Background(), "greet 'a b' c")
	var ee *host.ExitError
	if out != "hello a b|c\n" || !errors.As(err, &ee) || ee.Code != 2 {
		t.Errorf("greet = %q %v", out, err)
	}
	if calls := r.Calls(); len(calls) != 1 {
		t.Errorf("calls = %q", calls)
	}
}

func TestStubs(t *testing.T) {
	s, err := NewStubs(t.TempDir(), "dnf")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("dnf", "ok\n", 0); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Runner().Run(context.Background(), "dnf install 'it'\\''s.rpm'"); out != "ok\n" || err != nil {
		t.Fatalf("dnf = %q %v", out, err)
	}
	calls, err := s.Calls()
	if err != nil || len(calls) != 1 || strings.Join(calls[0], "|") != "dnf|install|it's.rpm" {
		t.Errorf("calls = %q %v", calls, err)
	}
}
