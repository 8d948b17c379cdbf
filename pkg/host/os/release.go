package hostos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Release is what os-release(5) says about a host. ID, ID_LIKE, VERSION_ID
// and PRETTY_NAME are the fields detection and reports use; Fields keeps
// every assignment for anything else (VARIANT_ID, PLATFORM_ID ...).
type Release struct {
	ID         string
	IDLike     []string
	VersionID  string
	PrettyName string
	Fields     map[string]string
}

var osReleaseKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseOSRelease parses an os-release file: KEY=value lines, values bare or
// in double or single quotes, backslash escapes as in a shell, no
// expansion, '#' comments and blank lines ignored. A line it cannot read is
// an error naming the line: guessing would silently misdetect the host.
func ParseOSRelease(data []byte) (Release, error) {
	rel := Release{Fields: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var errs []error
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok || !osReleaseKey.MatchString(key) {
			errs = append(errs, fmt.Errorf("line %d: %q is not KEY=value", n, line))
			continue
		}
		val, err := unquoteValue(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %s: %w", n, key, err))
			continue
		}
		rel.Fields[key] = val
	}
	if err := sc.Err(); err != nil {
		return Release{}, err
	}
	if len(errs) > 0 {
		return Release{}, fmt.Errorf("os-release: %w", errors.Join(errs...))
	}
	if len(rel.Fields) == 0 {
		return Release{}, fmt.Errorf("os-release: no KEY=value assignments")
	}
	rel.ID = rel.Fields["ID"]
	if rel.ID == "" {
		rel.ID = "linux" // os-release(5): the default when ID is unset
	}
	rel.IDLike = strings.Fields(rel.Fields["ID_LIKE"])
	rel.VersionID = rel.Fields["VERSION_ID"]
	rel.PrettyName = rel.Fields["PRETTY_NAME"]
	if rel.PrettyName == "" {
		rel.PrettyName = "Linux"
	}
	return rel, nil
}

// unquoteValue reads one value the way a POSIX shell would read a single
// word: quoted parts may be concatenated with bare ones (os-release says
// vendors do not, but a shell accepts it and so do we).
func unquoteValue(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if !closed {
				return "", fmt.Errorf("unterminated double quote")
			}
		case c == '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case c == ' ' || c == '\t':
			// Unquoted whitespace ends the word; only a comment may follow.
			if rest := strings.TrimSpace(s[i:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("unquoted space before %q", rest)
			}
			return b.String(), nil
		case strings.IndexByte("$`|&;<>()", c) >= 0:
			return "", fmt.Errorf("unquoted shell character %q", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// readReleaseScript prints the first of the two files that exists, base64
// encoded so no transport can change a byte. os-release(5): read
// /etc/os-release and only when it is missing /usr/lib/os-release.
const readReleaseScript = `for f in /etc/os-release /usr/lib/os-release; do
  if [ -r "$f" ]; then echo "$f"; base64 < "$f"; exit 0; fi
done
echo none`

// ReadRelease reads and parses the host's os-release file.
func ReadRelease(ctx context.Context, r host.Runner) (Release, error) {
	out, err := r.Run(ctx, host.Script(readReleaseScript))
	if err != nil {
		return Release{}, fmt.Errorf("reading os-release: %w", err)
	}
	name, body, _ := strings.Cut(strings.TrimLeft(out, "\n"), "\n")
	if strings.TrimSpace(name) == "none" {
		return Release{}, fmt.Errorf("neither /etc/os-release nor /usr/lib/os-release is readable")
	}
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return Release{}, fmt.Errorf("reading %s: %w", strings.TrimSpace(name), err)
	}
	rel, err := ParseOSRelease(data)
	if err != nil {
		return Release{}, fmt.Errorf("%s: %w", strings.TrimSpace(name), err)
	}
	return rel, nil
}
