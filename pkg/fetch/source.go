package fetch

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// source is a Request's Source, resolved: a remote URL or a local path.
type source struct {
	url  *url.URL // nil for a local file
	path string   // absolute local path when url is nil
}

// display names the source in logs and errors, with URL credentials redacted.
func (s source) display() string {
	if s.url != nil {
		return s.url.Redacted()
	}
	return s.path
}

// resolveSource reads a Source: http(s) URLs stay URLs, file:// URLs and
// everything else are local paths, relative ones joined to baseDir.
// The scheme and host are checked by the rule document validation applies.
func resolveSource(src, baseDir string) (source, error) {
	if strings.TrimSpace(src) == "" {
		return source{}, fmt.Errorf("fetch: empty source")
	}
	if err := v1alpha1.CheckSource(src); err != nil {
		return source{}, fmt.Errorf("fetch: source %s: %w", redactRaw(src), err)
	}
	if i := strings.Index(src, "://"); i > 0 {
		u, err := url.Parse(src)
		if err != nil {
			return source{}, fmt.Errorf("fetch: source %s is not a valid URL", redactRaw(src))
		}
		if strings.EqualFold(u.Scheme, "file") {
			return localSource(u.Path, baseDir)
		}
		return source{url: u}, nil
	}
	return localSource(src, baseDir)
}

func localSource(p, baseDir string) (source, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return source{}, fmt.Errorf("fetch: source %s: %w", p, err)
	}
	return source{path: abs}, nil
}

// redactRaw hides credentials in a string that did not parse as a URL.
func redactRaw(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if slash := strings.Index(rest, "/"); slash < 0 || at < slash {
			return scheme + "://xxxxx@" + rest[at+1:]
		}
	}
	return s
}

// ParseSHA256 reads an expected digest: 64 hex characters, optionally
// prefixed "sha256:", any case. "" stays "" (not checked).
func ParseSHA256(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	hexPart := s
	if algo, rest, ok := strings.Cut(s, ":"); ok {
		if !strings.EqualFold(algo, "sha256") {
			return "", fmt.Errorf("shasum %q: only sha256 is supported", s)
		}
		hexPart = rest
	}
	hexPart = strings.ToLower(hexPart)
	if !isHexSHA256(hexPart) {
		return "", fmt.Errorf("shasum %q is not a sha256 digest (64 hex characters)", s)
	}
	return hexPart, nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
