package fleet

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestLineHandler(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(LineHandler(&b)).With("fleet", "dev")
	log.Debug("not shown")
	log.Info("ready: kc0 2.6s")
	log.Warn("slow", "host", "kw0")
	want := "  ready: kc0 2.6s fleet=dev\n  WARN: slow fleet=dev host=kw0\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
