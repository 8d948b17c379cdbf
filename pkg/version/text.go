package version

import (
	"fmt"
	"strings"
)

// Text is Info as `cargoship version` prints it: one "key: value" line each,
// aligned, "unknown" for what the build did not record.
func (i Info) Text() string {
	commit := orUnknown(i.Commit)
	if i.Modified {
		commit += " (modified)"
	}
	var b strings.Builder
	for _, kv := range [][2]string{
		{"version", i.Version},
		{"commit", commit},
		{"date", orUnknown(i.Date)},
		{"go", i.GoVersion},
		{"platform", i.Platform},
	} {
		fmt.Fprintf(&b, "%-9s %s\n", kv[0]+":", kv[1])
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
