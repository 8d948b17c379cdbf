package k8s

import (
	"bytes"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The built pause sleeps until SIGTERM or SIGINT, then exits 0 saying why;
// SIGCHLD (a child's exit, which it reaps) does not stop it.
func TestSlowPauseStopsOnSignal(t *testing.T) {
	a := built(t, V1_35_4)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(a.Path("pause"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGCHLD))
			select {
			case err := <-done:
				t.Fatalf("pause stopped on SIGCHLD: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			require.NoError(t, cmd.Process.Signal(sig))
			select {
			case err := <-done:
				require.NoError(t, err, "exit 0")
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("pause did not stop")
			}
			assert.Contains(t, stderr.String(), "Shutting down, got signal")
		})
	}
}
