package host

import (
	"os/exec"
	"testing"
)

// TestScriptPassesValuesLiterally runs a Script line through a real shell:
// every value must come back byte for byte as its own argument.
func TestScriptPassesValuesLiterally(t *testing.T) {
	args := []string{"a b", "$(touch /nonexistent/pwned)", "it's `id`", "", "-n", "new\nline"}
	out, err := exec.Command("/bin/sh", "-c", Script(`for a in "$@"; do printf '[%s]' "$a"; done`, args...)).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, a := range args {
		want += "[" + a + "]"
	}
	if string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
