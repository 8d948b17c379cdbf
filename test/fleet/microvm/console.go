package microvm

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

const (
	consoleTail     = 3000 // bytes of the serial console's end in an error
	consoleFailures = 20   // distinct failure lines from before that end
)

var (
	// failureLine is what the console says when something went wrong: a
	// unit that failed or timed out, a dependency that did, a denial.
	failureLine = regexp.MustCompile(`(?i)fail|timed out|timeout|dependency|error|denied|no hostkeys`)
	ansiEscape  = regexp.MustCompile("\x1b\\[[0-9;]*m")
	kernelStamp = regexp.MustCompile(`^\[\s*[0-9.]+\]\s*`)
)

// consoleReport is what an error shows of a guest's serial console: the
// first distinct failure lines, which a boot that went wrong early has
// long scrolled past (a device that did not appear in time, then sshd
// failing every five seconds for ten minutes), then the console's end.
func consoleReport(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	text := ansiEscape.ReplaceAllString(string(b), "")
	head, tail := splitTail(text, consoleTail)
	var first []string
	seen := map[string]bool{}
	for _, l := range strings.Split(head, "\n") {
		key := kernelStamp.ReplaceAllString(strings.TrimSpace(l), "")
		if key == "" || seen[key] || !failureLine.MatchString(key) {
			continue
		}
		seen[key] = true
		if first = append(first, strings.TrimRight(l, "\r")); len(first) == consoleFailures {
			break
		}
	}
	if len(first) == 0 {
		return tail
	}
	return "its first failures:\n" + strings.Join(first, "\n") + "\n[…]\nits end:\n" + tail
}

// splitTail cuts text before its last n bytes, at a line start.
func splitTail(text string, n int) (head, tail string) {
	if len(text) <= n {
		return "", text
	}
	cut := len(text) - n
	if i := strings.IndexByte(text[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	return text[:cut], text[cut:]
}
