package hostos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// TestEnvironmentLineShellReadsLiteral sources each rendered line in a
// real shell: the value must come back byte for byte, unexpanded.
func TestEnvironmentLineShellReadsLiteral(t *testing.T) {
	for _, v := range []string{"plain", "", "http://user:p@ss@proxy:3128", "a b", "$HOME", "`id`", "it's", `back\slash`, "x#y", " lead", "semi;colon", "100%"} {
		line, err := EnvironmentLine("V", v)
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		out, err := exec.Command("sh", "-c", line+"\nprintf %s \"$V\"").Output()
		if err != nil || string(out) != v {
			t.Errorf("%q rendered as %s reads back %q (%v)", v, line, out, err)
		}
		// pam_env strips one pair of quotes and expands nothing.
		if _, pam, _ := envLineKey(line); pam != v {
			t.Errorf("%q rendered as %s reads as %q for pam_env", v, line, pam)
		}
	}
	for _, bad := range []string{"a\nb", "it's $x", "cr\r"} {
		if _, err := EnvironmentLine("V", bad); err == nil {
			t.Errorf("%q should be refused", bad)
		}
	}
	if _, err := EnvironmentLine("1BAD", "x"); err == nil {
		t.Error("bad key should be refused")
	}
}

func TestUpsertEnvironment(t *testing.T) {
	body := "PATH=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n" +
		"# proxy\n" +
		"export HTTP_PROXY=\"http://old:3128\"\n" +
		"NO_PROXY='10.0.0.0/8'\n" +
		"HTTP_PROXY=http://dup:3128"
	values := map[string]string{"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "10.0.0.0/8", "CONTAINERD_ADDRESS": "/run/k3s/containerd/containerd.sock"}
	got, keys, err := UpsertEnvironment([]byte(body), values)
	if err != nil {
		t.Fatal(err)
	}
	want := "PATH=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n" +
		"# proxy\n" +
		"HTTP_PROXY=http://proxy:3128\n" +
		"NO_PROXY='10.0.0.0/8'\n" +
		"CONTAINERD_ADDRESS=/run/k3s/containerd/containerd.sock\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Join(keys, ",") != "CONTAINERD_ADDRESS,HTTP_PROXY" {
		t.Errorf("changed keys = %q (NO_PROXY already reads the same)", keys)
	}
	again, keys, err := UpsertEnvironment(got, values)
	if err != nil || string(again) != string(got) || len(keys) != 0 {
		t.Errorf("second upsert changed %q", keys)
	}
}

func TestEnvironmentStepLocal(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "environment")
	if err := os.WriteFile(path, []byte("LANG=C.UTF-8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step := Environment{Path: path, Values: map[string]string{"K3S_TOKEN_HINT": "a b"}}
	r := &hosttest.Local{}
	plan, err := step.Plan(ctx, r)
	if err != nil || len(plan.Actions) != 1 || strings.Contains(plan.Actions[0], "a b") {
		t.Fatalf("plan = %+v %v (values must not be printed)", plan, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "LANG=C.UTF-8\n" {
		t.Fatal("Plan wrote the file")
	}
	if c, err := step.Apply(ctx, r); err != nil || !c.Changed() {
		t.Fatalf("apply = %+v %v", c, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "LANG=C.UTF-8\nK3S_TOKEN_HINT='a b'\n" {
		t.Errorf("file = %q", b)
	}
	if c, err := step.Apply(ctx, r); err != nil || c.Changed() {
		t.Errorf("second apply = %+v %v", c, err)
	}
}
