// Package shell builds command lines for remote hosts. Every value that
// came from a document goes through Quote, so a hostname like `a;reboot`
// arrives as a literal.
package shell

import "strings"

// Quote returns s as one POSIX shell word.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// Join quotes each argument and joins them into one command line.
func Join(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// isSafe reports whether s needs no quoting: letters, digits and a few
// punctuation marks no shell gives meaning to.
func isSafe(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_./:=@%+,", r):
		default:
			return false
		}
	}
	return true
}
