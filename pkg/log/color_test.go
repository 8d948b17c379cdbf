//go:build linux

package log

import (
	"bytes"
	"os"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/log/ptytest"
)

func TestColorOnlyOnATerminalAndOnlyWhenNotTurnedOff(t *testing.T) {
	tty := ptytest.Open(t)
	if !Color(tty, false) {
		t.Error("a terminal gets colour and progress bars")
	}
	if Color(tty, true) {
		t.Error("--no-color, no_color or NO_COLOR turns them off on a terminal too")
	}
	if Color(&bytes.Buffer{}, false) {
		t.Error("a buffer is no terminal")
	}
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Color(f, false) {
		t.Error("a file is no terminal")
	}
}
