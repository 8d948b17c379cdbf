package hosttest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"testing"
)

// Netns creates a throwaway network namespace and returns a Local runner
// whose commands run inside it: a real kernel and real tools, with
// nothing applied to this machine's own network stack. It skips the test
// when not root or when namespaces are unavailable, and deletes the
// namespace when the test ends.
func Netns(t testing.TB) *Local {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "cargoship-test-" + hex.EncodeToString(b)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("deleting namespace %s: %v %s", name, err, out)
		}
	})
	return &Local{Name: name, Prefix: []string{"ip", "netns", "exec", name}}
}
