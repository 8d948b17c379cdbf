package host

import (
	"strings"
	"testing"
)

// TestPinnedKeyReadsPinsAsValidationDoes: a pin validate refuses is refused
// when connecting too, with the same words; a SHA256: pin of the wrong
// length used to be taken and could never match (issue 11: 10).
func TestPinnedKeyReadsPinsAsValidationDoes(t *testing.T) {
	for _, bad := range []string{"ssh-ed25519 AAAA...", "SHA256:tooshort"} {
		if _, _, err := pinnedKey("h1", "10.0.0.1:22", bad); err == nil || !strings.Contains(err.Error(), "host h1: hostKey") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	const line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPA6gmCq3myOTzCwEzGyyYf/aSeU6S+NXmeZj8JoYTte"
	if cb, algos, err := pinnedKey("h1", "10.0.0.1:22", line); err != nil || cb == nil || len(algos) != 1 {
		t.Errorf("a key line: %v %v", algos, err)
	}
	if cb, _, err := pinnedKey("h1", "10.0.0.1:22", "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"); err != nil || cb == nil {
		t.Errorf("a fingerprint: %v", err)
	}
}
