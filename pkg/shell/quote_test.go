package shell

import (
	"os/exec"
	"testing"
)

// TestQuoteRoundTrip runs each quoted value through a real shell and checks
// it comes back byte for byte.
func TestQuoteRoundTrip(t *testing.T) {
	for _, in := range []string{"", "plain", "a;reboot", "$(id)", "`id`", "it's", "a b\tc", "new\nline", "*", "~root", "x'\"y", "--flag", "ümlaut", "back\\slash", "&&", "|", "!"} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+Quote(in)).Output()
		if err != nil {
			t.Fatalf("Quote(%q) = %s: %v", in, Quote(in), err)
		}
		if string(out) != in {
			t.Errorf("Quote(%q) = %s came back as %q", in, Quote(in), out)
		}
	}
}

func TestJoin(t *testing.T) {
	if got, want := Join("echo", "a b", "c;d"), `echo 'a b' 'c;d'`; got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
}
