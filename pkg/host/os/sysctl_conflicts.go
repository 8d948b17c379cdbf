package hostos

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// SysctlSources are the files systemd-sysctl and sysctl --system read, in
// the order their directories mask one another: a file of the same name in
// an earlier directory hides the later ones. /etc/sysctl.conf is read last
// by sysctl --system and, through the 99-sysctl.conf link most
// distributions ship, by systemd-sysctl (docs/reference/hosts.md §3.6).
var SysctlSources = []string{
	"/etc/sysctl.d/*.conf", "/run/sysctl.d/*.conf", "/usr/local/lib/sysctl.d/*.conf",
	"/usr/lib/sysctl.d/*.conf", "/lib/sysctl.d/*.conf", "/etc/sysctl.conf",
}

// sysctlScan prints path<TAB>key<TAB>value for every assignment in the
// files the globs ($@) match. The globs are expanded by this shell on
// purpose; a glob matching nothing stays literal and fails the -f test.
const sysctlScan = `for g in "$@"; do for f in $g; do
  [ -f "$f" ] || continue
  awk -v f="$f" '/^[ \t]*[#;]/ {next} index($0, "=") {k=substr($0, 1, index($0, "=")-1); v=substr($0, index($0, "=")+1); gsub(/^[ \t-]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v); gsub("/", ".", k); print f "\t" k "\t" v}' "$f"
done; done`

// sysctlSetting is one assignment in a sysctl configuration file.
type sysctlSetting struct {
	file, key, value string
}

// warnConflicts warns about every file that sets one of s's keys to
// another value: at boot the file whose name sorts last wins, and
// sysctl --system applies /etc/sysctl.conf after everything.
func (s Sysctl) warnConflicts(ctx context.Context, r host.Runner, c *Change) error {
	sources := s.Sources
	if sources == nil {
		sources = SysctlSources
	}
	out, err := r.Sudo(ctx, host.Script(sysctlScan, sources...))
	if err != nil {
		return fmt.Errorf("reading sysctl configuration files: %w", err)
	}
	own := append([]string{s.path()}, s.legacy().paths...)
	seen := map[string]string{} // base name -> the directory that provides it
	for _, set := range parseSysctlScan(out) {
		base := path.Base(set.file)
		if dir, masked := seen[base]; masked && dir != path.Dir(set.file) {
			continue
		}
		seen[base] = path.Dir(set.file)
		want, ours := s.Values[set.key]
		if !ours || slices.Contains(own, set.file) || sameValue(want, set.value) {
			continue
		}
		wins := "sorts before " + path.Base(s.path()) + ", which wins at boot"
		if set.file == "/etc/sysctl.conf" || base > path.Base(s.path()) {
			wins = "is applied after " + path.Base(s.path()) + " and wins"
		}
		c.warnf("%s sets %s = %s, not %s: it %s; remove the setting there", set.file, set.key, set.value, strings.TrimSpace(want), wins)
	}
	return nil
}

func parseSysctlScan(out string) []sysctlSetting {
	var sets []sysctlSetting
	for _, line := range strings.Split(out, "\n") {
		if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[1] != "" {
			sets = append(sets, sysctlSetting{file: f[0], key: f[1], value: f[2]})
		}
	}
	return sets
}
