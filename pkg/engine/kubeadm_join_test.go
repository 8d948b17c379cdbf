package engine

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKubeadm is a test double for kubeadm join as 1.34 and 1.35 behave
// when a learner's promotion loses its reply: the first join fails with
// the etcd client's retries ("can only promote a learner member") after
// the member was promoted; a join that skips the phases before etcd-join
// succeeds. It records every call in calls. With other set, the first
// join fails another way.
func fakeKubeadm(t *testing.T, other bool) (bin, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	first := `echo '{"level":"warn","msg":"retrying of unary invoker failed","method":"/etcdserverpb.Cluster/MemberPromote","error":"rpc error: code = FailedPrecondition desc = etcdserver: can only promote a learner member"}' >&2
echo 'error: error execution phase etcd-join: error creating local etcd static pod manifest file: etcdserver: can only promote a learner member' >&2
exit 1`
	if other {
		first = `echo 'error: error execution phase preflight: [preflight] Some fatal errors occurred' >&2; exit 1`
	}
	script := `#!/bin/sh
echo "$*" >> "` + calls + `"
case "$*" in
*--skip-phases=*) echo "This node has joined the cluster and a new control plane instance was created"; exit 0 ;;
esac
` + first + "\n"
	bin = filepath.Join(dir, "kubeadm")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

func runJoinScript(t *testing.T, bin string) (string, error) {
	t.Helper()
	out, err := exec.Command("sh", "-c", controllerJoinScript, "sh", bin, "/etc/cargoship/kubeadm.yaml").CombinedOutput()
	return string(out), err
}

func TestControllerJoinGoesOnAfterALostPromotion(t *testing.T) {
	bin, calls := fakeKubeadm(t, false)
	out, err := runJoinScript(t, bin)
	if err != nil {
		t.Fatalf("join failed: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(calls)
	want := "join --config /etc/cargoship/kubeadm.yaml\n" +
		"join --config /etc/cargoship/kubeadm.yaml --skip-phases=preflight,control-plane-prepare,check-etcd,kubelet-start\n"
	if string(got) != want {
		t.Errorf("kubeadm calls:\n%s\nwant\n%s", got, want)
	}
	for _, w := range []string{"can only promote a learner member", "joining again from the etcd-join phase", "a new control plane instance was created"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestControllerJoinOtherFailureIsNotRetried(t *testing.T) {
	bin, calls := fakeKubeadm(t, true)
	out, err := runJoinScript(t, bin)
	var ee *exec.ExitError
	if err == nil || !strings.Contains(out, "preflight") {
		t.Fatalf("join = %v, want kubeadm's own failure:\n%s", err, out)
	}
	if ok := errors.As(err, &ee); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit = %v, want kubeadm's 1", err)
	}
	if got, _ := os.ReadFile(calls); strings.Count(string(got), "\n") != 1 {
		t.Errorf("kubeadm ran %q, want once", got)
	}
}

func TestOnlyControllersJoinThroughTheScript(t *testing.T) {
	if got := joinCommand(false); got != "/usr/bin/kubeadm join --config /etc/cargoship/kubeadm.yaml" {
		t.Errorf("worker join = %q", got)
	}
	if got := joinCommand(true); !strings.HasPrefix(got, "sh -c ") || !strings.HasSuffix(got, " sh /usr/bin/kubeadm /etc/cargoship/kubeadm.yaml") {
		t.Errorf("controller join = %q", got)
	}
}
