package main

import (
	"strings"
	"testing"
)

func TestParseStateKeepsTextNotDigest(t *testing.T) {
	st := parseState("@@file /a 644 12 abc\nhello <kc0>\n@@file /big 755 9 def\n@@hosts block\nx\n")
	if got := st["file /a"]; got != "mode 644\nhello <kc0>\n" {
		t.Errorf("text file: %q", got)
	}
	if got := st["file /big"]; got != "mode 755 size 9 sha256 def\n" {
		t.Errorf("binary file: %q", got)
	}
	if got := st["hosts block"]; got != "x\n" {
		t.Errorf("hosts block: %q", got)
	}
}

func TestSemanticIgnoresFormatting(t *testing.T) {
	pairs := [][2]string{
		{"mode 644\n# header\nnet.a = 1\nnet.b = 2\n", "mode 644\nnet.b=2\nnet.a=1\n"},
		{"mode 600\ndisable:\n  - x\nmode: \"0600\"\n", "mode 600\nmode: '0600'\ndisable:\n- x\n"},
	}
	for _, p := range pairs {
		if a, b := semantic(p[0]), semantic(p[1]); a != b {
			t.Errorf("%q != %q", a, b)
		}
	}
	if semantic("mode 600\na: 1\n") == semantic("mode 600\na: 2\n") {
		t.Error("different values compare equal")
	}
}

func TestCompareStatesNamesDifferences(t *testing.T) {
	a := map[string]hostState{"kc0": {"file /x": "mode 644\n", "file /t/token": "mode 600 size 64 sha256 a\n"}}
	b := map[string]hostState{"kc0": {"file /x": "mode 640\n", "file /t/token": "mode 600 size 64 sha256 b\n"}}
	d := compareStates(a, b)
	if len(d) != 1 || !strings.Contains(d[0], "file /x") {
		t.Errorf("differences: %q", d)
	}
}
