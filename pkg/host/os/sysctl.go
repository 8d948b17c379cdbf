package hostos

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// SysctlPath is where sysctl values persist across reboots. systemd-sysctl
// and sysctl --system apply every sysctl.d file in the byte order of its
// name, whatever its directory, and the last file setting a key wins. The
// name sorts after every "NN-" file, 99-sysctl.conf (the /etc/sysctl.conf
// link) included, and after the zz-stig-hardening.conf some STIGs write, so
// a hardening "net.ipv4.ip_forward = 0" does not undo it at boot
// (docs/reference/hosts.md §3.6); a file sorting later still is warned about.
const SysctlPath = "/etc/sysctl.d/zzz-cargoship.conf"

// LegacySysctlPaths are names earlier releases wrote: an apply removes them
// (when they carry cargoship's header) so two cargoship files never disagree.
var LegacySysctlPaths = []string{"/etc/sysctl.d/90-cargoship.conf"}

var sysctlKey = regexp.MustCompile(`^[a-zA-Z0-9_]+([./][a-zA-Z0-9_\-]+)+$`)

// Sysctl sets kernel parameters now (sysctl -w, key by key) and persists
// them in one sysctl.d file. A key the host refuses (a node-wide key in a
// container, a read-only or unknown key) is reported in Change.Failed and
// does not fail the step. Values are read back rather than trusting
// sysctl's exit status, which is 0 for read-only keys before procps 4.0.4
// (docs/reference/hosts.md §3.3).
type Sysctl struct {
	Values map[string]string
	// Path defaults to SysctlPath.
	Path string
	// Legacy are files of earlier releases to remove; with Path unset
	// they default to LegacySysctlPaths.
	Legacy []string
	// Sources are the sysctl configuration globs read for keys set to
	// another value elsewhere; nil means SysctlSources.
	Sources []string
}

func (s Sysctl) path() string {
	return cmp.Or(s.Path, SysctlPath)
}

func (s Sysctl) legacy() removeStep {
	paths := s.Legacy
	if paths == nil && s.Path == "" {
		paths = LegacySysctlPaths
	}
	return removeStep{paths: paths, header: generatedHeader}
}

func (s Sysctl) keys() ([]string, error) {
	keys := slices.Sorted(maps.Keys(s.Values))
	for _, k := range keys {
		if !sysctlKey.MatchString(k) {
			return nil, fmt.Errorf("%q is not a sysctl key", k)
		}
		if strings.ContainsAny(s.Values[k], "\n\r\x00") {
			return nil, fmt.Errorf("sysctl %s: the value holds a line break", k)
		}
	}
	return keys, nil
}

// RenderSysctl is the sysctl.d file for values, keys sorted.
func RenderSysctl(values map[string]string) []byte {
	var b strings.Builder
	b.WriteString(generatedHeader)
	for _, k := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(&b, "%s = %s\n", k, strings.TrimSpace(values[k]))
	}
	return []byte(b.String())
}

// sysctlRead prints key<TAB>ok|err<TAB>value-or-message per key, with tabs
// and newlines in values folded to spaces.
const sysctlRead = `for k in "$@"; do
  if v=$(sysctl -n "$k" 2>&1); then s=ok; else s=err; fi
  f=/proc/sys/$(printf '%s' "$k" | tr . /)
  if [ -w "$f" ]; then w=rw; else w=ro; fi
  printf '%s\t%s\t%s\t%s\n' "$k" "$s" "$w" "$(printf '%s' "$v" | tr '\t\n' '  ')"
done`

// sysctlWrite runs sysctl -w per key=value and prints key<TAB>stderr.
const sysctlWrite = `for kv in "$@"; do
  m=$(sysctl -w "$kv" 2>&1 >/dev/null)
  printf '%s\t%s\n' "${kv%%=*}" "$(printf '%s' "$m" | tr '\t\n' '  ')"
done`

type sysctlValue struct {
	ok bool
	// readOnly: /proc/sys mounts the key read-only here (a node-wide key
	// in a container), so setting it can only fail.
	readOnly bool
	value    string // or the error message
}

func readSysctls(ctx context.Context, r host.Runner, keys []string) (map[string]sysctlValue, error) {
	out, err := r.Sudo(ctx, host.Script(sysctlRead, keys...))
	if err != nil {
		return nil, fmt.Errorf("reading sysctl values: %w", err)
	}
	got := map[string]sysctlValue{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) == 4 {
			got[f[0]] = sysctlValue{ok: f[1] == "ok", readOnly: f[2] == "ro", value: strings.TrimSpace(f[3])}
		}
	}
	for _, k := range keys {
		if _, ok := got[k]; !ok {
			return nil, fmt.Errorf("reading sysctl values: no answer for %s in %q", k, out)
		}
	}
	return got, nil
}

// sameValue compares as sysctl does: "0 2147483647" equals "0\t2147483647".
func sameValue(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// plan returns the keys whose live value differs, the change so far, and
// whether the file must be written.
func (s Sysctl) plan(ctx context.Context, r host.Runner) (diff []string, c Change, writeFile bool, err error) {
	keys, err := s.keys()
	if err != nil {
		return nil, c, false, err
	}
	_, c, err = s.legacy().plan(ctx, r)
	if err != nil {
		return nil, c, false, err
	}
	old, exists, err := host.ReadFileIfExists(ctx, r, s.path())
	if err != nil {
		return nil, c, false, err
	}
	if len(keys) > 0 {
		if err := s.warnConflicts(ctx, r, &c); err != nil {
			return nil, c, false, err
		}
	}
	switch {
	case len(keys) == 0 && exists:
		c.actionf("remove %s", s.path())
		return nil, c, true, nil
	case len(keys) == 0:
		return nil, c, false, nil
	case !exists || string(old) != string(RenderSysctl(s.Values)):
		c.actionf("write %s", s.path())
		writeFile = true
	}
	live, err := readSysctls(ctx, r, keys)
	if err != nil {
		return nil, c, false, err
	}
	for _, k := range keys {
		v := live[k]
		switch {
		case !v.ok:
			c.Failed = append(c.Failed, Failure{Item: k, Reason: v.value})
		case !sameValue(v.value, s.Values[k]) && v.readOnly:
			// A dry run must say what a real run would do: this one
			// would try and be refused, which is not a change.
			c.Failed = append(c.Failed, Failure{Item: k, Reason: fmt.Sprintf("read-only on this host: stays %s", v.value)})
		case !sameValue(v.value, s.Values[k]):
			diff = append(diff, k)
			c.actionf("set %s = %s (now %s)", k, strings.TrimSpace(s.Values[k]), v.value)
		}
	}
	return diff, c, writeFile, nil
}

// Plan implements Step.
func (s Sysctl) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, _, err := s.plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (s Sysctl) Apply(ctx context.Context, r host.Runner) (Change, error) {
	diff, planned, writeFile, err := s.plan(ctx, r)
	if err != nil {
		return Change{}, err
	}
	c := Change{Failed: planned.Failed, Warnings: planned.Warnings}
	legacy, err := s.legacy().apply(ctx, r)
	if err != nil {
		return Change{}, err
	}
	c.Actions = append(c.Actions, legacy.Actions...)
	if writeFile {
		if len(s.Values) == 0 {
			if err := host.Remove(ctx, r, s.path()); err != nil {
				return Change{}, err
			}
			c.actionf("remove %s", s.path())
			return c, nil
		}
		if _, err := host.WriteFile(ctx, r, s.path(), RenderSysctl(s.Values), 0o644, ""); err != nil {
			return Change{}, err
		}
		c.actionf("write %s", s.path())
	}
	if len(diff) == 0 {
		return c, nil
	}
	args := make([]string, len(diff))
	for i, k := range diff {
		args[i] = k + "=" + strings.TrimSpace(s.Values[k])
	}
	out, err := r.Sudo(ctx, host.Script(sysctlWrite, args...))
	if err != nil {
		return Change{}, fmt.Errorf("setting sysctl values: %w", err)
	}
	msgs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, m, ok := strings.Cut(line, "\t"); ok {
			msgs[k] = strings.TrimSpace(m)
		}
	}
	after, err := readSysctls(ctx, r, diff)
	if err != nil {
		return Change{}, err
	}
	for _, k := range diff {
		if v := after[k]; v.ok && sameValue(v.value, s.Values[k]) {
			c.actionf("set %s = %s", k, strings.TrimSpace(s.Values[k]))
			continue
		}
		reason := "the value is still " + after[k].value
		if m := msgs[k]; m != "" {
			reason += ": " + m
		}
		c.Failed = append(c.Failed, Failure{Item: k, Reason: reason})
	}
	return c, nil
}
