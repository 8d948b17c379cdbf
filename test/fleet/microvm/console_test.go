package microvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleReportKeepsTheFirstFailure: CI's guest failed to find its seed
// volume early in the boot, then sshd failed every few seconds for ten
// minutes; the error showed only the end, with nothing of the cause.
func TestConsoleReportKeepsTheFirstFailure(t *testing.T) {
	var b strings.Builder
	b.WriteString("[    1.000000] Linux version 6.1.0\n")
	b.WriteString("[   91.500000] systemd[1]: \x1b[0;1;31mdev-disk-by\\x2dlabel-CIDATA.device: Job dev-disk-by\\x2dlabel-CIDATA.device/start timed out.\x1b[0m\n")
	b.WriteString("[   91.600000] systemd[1]: Dependency failed for cargoship-seed.service.\n")
	for i := range 400 {
		fmt.Fprintf(&b, "[  %d.000000] systemd[1]: ssh.service: Failed with result 'exit-code'.\n", 100+i*8)
		fmt.Fprintf(&b, "[  %d.100000] systemd[1]: Failed to start ssh.service - OpenBSD Secure Shell server.\n", 100+i*8)
	}
	p := filepath.Join(t.TempDir(), "console.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := consoleReport(p)
	for _, want := range []string{"CIDATA.device/start timed out.", "Dependency failed for cargoship-seed.service", "its end:\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b[") {
		t.Error("the report keeps the console's colour codes")
	}
	// sshd's failure is one line above the end, not 400
	head, _, _ := strings.Cut(got, "its end:")
	if n := strings.Count(head, "Failed to start ssh.service"); n != 1 {
		t.Errorf("sshd's failure is %d times before the end, want once:\n%s", n, head)
	}
	if len(got) > consoleTail+consoleFailures*200 {
		t.Errorf("the report is %d bytes", len(got))
	}
}

// TestConsoleReportOfAShortConsoleIsAllOfIt: nothing is cut, nothing repeated.
func TestConsoleReportOfAShortConsoleIsAllOfIt(t *testing.T) {
	text := "[    1.0] Linux\n[    2.0] systemd[1]: Failed to start x.service.\nkw0 login:\n"
	p := filepath.Join(t.TempDir(), "console.log")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := consoleReport(p); got != text {
		t.Errorf("consoleReport = %q, want the whole console", got)
	}
	if got := consoleReport(filepath.Join(t.TempDir(), "none")); !strings.Contains(got, "no such file") {
		t.Errorf("a missing console: %q", got)
	}
}
