package host

import (
	"slices"
	"strings"
)

// redactMark replaces a secret in errors and logs.
const redactMark = "[REDACTED]"

// redact masks every non-empty secret in s. Longer secrets go first so a
// secret that contains another is masked whole.
func redact(s string, secrets []string) string {
	sorted := make([]string, 0, len(secrets))
	for _, x := range secrets {
		if x != "" {
			sorted = append(sorted, x)
		}
	}
	if len(sorted) == 0 {
		return s
	}
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, x := range sorted {
		s = strings.ReplaceAll(s, x, redactMark)
	}
	return s
}

// tailBuffer keeps the last max bytes written: enough stderr to explain a
// failure without holding a chatty command's whole output.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
