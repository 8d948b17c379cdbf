package host

import (
	"testing"
	"time"
)

// The product's slack waits as it has them, kept before TestMain
// shortens them for the run (shortenWaits).
var productKillGrace, productKillPoll = killGrace, killPoll

// shortenWaits makes killGroup look for a TERMed group every 50ms, not
// every second: the tests cancel dozens of commands, each gone at once,
// and each cancel waited the second out. The grace itself, and the
// deadlines derived from it, stay the product's.
func shortenWaits() { killPoll = 50 * time.Millisecond }

// withKillGrace sets killGrace for one test, which must not be parallel:
// the parallel tests run once it has restored it.
func withKillGrace(t *testing.T, d time.Duration) {
	t.Helper()
	old := killGrace
	killGrace = d
	t.Cleanup(func() { killGrace = old })
}

// TestKillLineAsTheProductSendsIt: with the product's knobs, killGroup
// gives its script three looks a second apart; the tests' shorter poll
// keeps the grace.
func TestKillLineAsTheProductSendsIt(t *testing.T) {
	want := Script(killScript, "42", "7", "3", "1")
	if got := killLine(42, 7, productKillGrace, productKillPoll); got != want {
		t.Errorf("killLine = %q\nwant %q", got, want)
	}
	want = Script(killScript, "42", "7", "6", "0.5")
	if got := killLine(42, 7, 3*time.Second, 500*time.Millisecond); got != want {
		t.Errorf("killLine = %q\nwant %q", got, want)
	}
}
