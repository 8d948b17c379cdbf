package host

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// BatchReadBody is the script Prefetch sends: it runs each of its
// arguments (a command line) as a shell would, stdin closed, and prints for
// each its stdout and stderr in base64 and its exit status, then "cs-end".
// stdout goes straight into base64, so a file's bytes arrive exactly; no
// temporary file is written, so a batch of reads writes nothing. A runner
// that answers commands itself (a test fake) recognizes this body and
// answers with BatchReply.
const BatchReadBody = `exec 4>&1
nl='
'
for c in "$@"; do
	echo cs-out
	e=$( { { sh -c "$c" </dev/null 2>&3 3>&- 4>&-; printf '\n%s' "$?" >&3; } | base64 >&4; } 3>&1 )
	echo cs-err
	case $e in *"$nl"*) printf '%s' "${e%"$nl"*}" | base64 ;; esac
	echo "cs-rc ${e##*"$nl"}"
done
echo cs-end`

// BatchResult is what one command of a batch printed and how it exited.
type BatchResult struct {
	Stdout, Stderr string
	Code           int
}

// BatchReply renders results as BatchReadBody prints them.
func BatchReply(results []BatchResult) string {
	var b strings.Builder
	for _, r := range results {
		b.WriteString("cs-out\n")
		if r.Stdout != "" {
			b.WriteString(base64.StdEncoding.EncodeToString([]byte(r.Stdout)) + "\n")
		}
		b.WriteString("cs-err\n")
		if r.Stderr != "" {
			b.WriteString(base64.StdEncoding.EncodeToString([]byte(r.Stderr)) + "\n")
		}
		fmt.Fprintf(&b, "cs-rc %d\n", r.Code)
	}
	b.WriteString("cs-end\n")
	return b.String()
}

// parseBatch reads BatchReadBody's output for n commands. Anything else
// (a truncated answer, a shell that printed something of its own) is an
// error: the caller then asks each command again rather than guess.
func parseBatch(out string, n int) ([]BatchResult, error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var res []BatchResult
	i := 0
	next := func() (string, bool) {
		if i >= len(lines) {
			return "", false
		}
		i++
		return lines[i-1], true
	}
	// section collects base64 lines up to the marker that ends them.
	section := func(end string) (string, string, error) {
		var enc strings.Builder
		for {
			l, ok := next()
			if !ok {
				return "", "", errors.New("the batch's answer ended early")
			}
			if strings.HasPrefix(l, end) {
				b, err := base64.StdEncoding.DecodeString(enc.String())
				if err != nil {
					return "", "", fmt.Errorf("the batch's answer is not base64: %w", err)
				}
				return string(b), l, nil
			}
			enc.WriteString(strings.TrimSpace(l))
		}
	}
	for len(res) < n {
		if l, _ := next(); l != "cs-out" {
			return nil, fmt.Errorf("the batch's answer has %q where command %d should start", l, len(res)+1)
		}
		stdout, _, err := section("cs-err")
		if err != nil {
			return nil, err
		}
		stderr, rc, err := section("cs-rc ")
		if err != nil {
			return nil, err
		}
		code, err := strconv.Atoi(strings.TrimPrefix(rc, "cs-rc "))
		if err != nil {
			return nil, fmt.Errorf("the batch's answer has exit status %q", rc)
		}
		res = append(res, BatchResult{Stdout: stdout, Stderr: stderr, Code: code})
	}
	if l, _ := next(); l != "cs-end" || i != len(lines) {
		return nil, errors.New("the batch's answer does not end where it should")
	}
	return res, nil
}
