package engine

import (
	"strings"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// systemctl is one systemctl call over the given units.
func systemctl(args []string, units ...string) string {
	return shell.Join(append(append([]string{"systemctl"}, args...), units...)...)
}

// firstInstalled runs args with the first of the candidate executables
// that exists, and does nothing (successfully) when none does: install
// routes put the same binary in different places (tarball /usr/local/bin,
// RPM /usr/bin), and sudo's secure_path may not search either.
func firstInstalled(candidates []string, args ...string) string {
	var b strings.Builder
	for i, c := range candidates {
		if i == 0 {
			b.WriteString("if")
		} else {
			b.WriteString(" elif")
		}
		b.WriteString(" [ -x " + shell.Quote(c) + " ]; then ")
		b.WriteString(shell.Join(append([]string{c}, args...)...))
		b.WriteString(";")
	}
	b.WriteString(" fi")
	return b.String()
}

// firstInstalledElse runs argv(candidate) for the first executable
// candidate, and otherwise the shell command missing.
func firstInstalledElse(candidates []string, missing string, argv func(string) []string) string {
	var b strings.Builder
	for i, c := range candidates {
		if i == 0 {
			b.WriteString("if")
		} else {
			b.WriteString(" elif")
		}
		b.WriteString(" [ -x " + shell.Quote(c) + " ]; then " + shell.Join(argv(c)...) + ";")
	}
	b.WriteString(" else " + missing + "; fi")
	return b.String()
}
