package host

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestRelayLinesRemovesEveryRelayLine_Root: counting reads and changes
// nothing; removing drops every relay line, young or old, and keeps
// every other byte, a missing final newline too; a second removal finds
// none.
func TestRelayLinesRemovesEveryRelayLine_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	orig := f.keepKeys(t)
	to, p := f.relayPeer(t, "root")
	line := func(id string) string {
		return `restrict,from="10.0.0.9",command="exec cat > '/x'" ` + testPublicKey(t) + " " + relayMarker + id + "\n"
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	kept := string(orig) + "# the operator's own, no newline at the end"
	with := line(now+"-0123456789abcdef01234567") + string(orig) + line("0123456789abcdef01234567") + "# the operator's own, no newline at the end"
	if err := f.writeKeys([]byte(with)); err != nil {
		t.Fatal(err)
	}
	if n, err := RelayLines(ctx, to, p, false); err != nil || n != 2 {
		t.Fatalf("counting: %d, %v; want 2", n, err)
	}
	sameBytes(t, f.authorizedKeys(), []byte(with))
	if n, err := RelayLines(ctx, to, p, true); err != nil || n != 2 {
		t.Fatalf("removing: %d, %v; want 2", n, err)
	}
	sameBytes(t, f.authorizedKeys(), []byte(kept))
	if fi, err := os.Stat(f.authorizedKeys()); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode after the removal: %v, %v; want 0644 kept", fi.Mode(), err)
	}
	if n, err := RelayLines(ctx, to, p, true); err != nil || n != 0 {
		t.Errorf("removing again: %d, %v; want 0", n, err)
	}
	sameBytes(t, f.authorizedKeys(), []byte(kept))

	p.AuthorizedKeys = f.authorizedKeys() + ".missing"
	if n, err := RelayLines(ctx, to, p, true); err != nil || n != 0 {
		t.Errorf("a missing file: %d, %v; want 0 and no error", n, err)
	}
	if _, err := os.Stat(p.AuthorizedKeys); !os.IsNotExist(err) {
		t.Errorf("removing from a missing file made it: %v", err)
	}
}
