package hostos

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// EnvironmentPath is the system-wide environment pam_env reads at login.
const EnvironmentPath = "/etc/environment"

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Environment upserts KEY=VALUE lines in /etc/environment and leaves every
// other line as it is.
type Environment struct {
	Values map[string]string
	// Path defaults to EnvironmentPath.
	Path string
}

func (e Environment) path() string {
	return cmp.Or(e.Path, EnvironmentPath)
}

// EnvironmentLine renders KEY=VALUE so that pam_env (which strips one pair
// of surrounding quotes and expands nothing) and a shell that sources the
// file read the same literal value: as shell.Quote renders it (bare or in
// single quotes) when it holds no single quote, in double quotes when it
// holds one but nothing a shell expands inside double quotes. A value
// neither can carry is refused by the rule document validation applies.
func EnvironmentLine(key, value string) (string, error) {
	if !envName.MatchString(key) {
		return "", fmt.Errorf("%q is not an environment variable name", key)
	}
	if err := v1alpha1.CheckEnvironmentValue(value); err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	if !strings.Contains(value, "'") {
		// one word, bare or in single quotes: what pam_env strips too
		return key + "=" + shell.Quote(value), nil
	}
	return key + `="` + value + `"`, nil
}

// envLineKey returns the key an /etc/environment line assigns ("export "
// allowed, as pam_env allows it) and its value with one pair of
// surrounding quotes removed, as pam_env reads it.
func envLineKey(line string) (key, value string, ok bool) {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "export ")
	k, v, found := strings.Cut(t, "=")
	if !found || !envName.MatchString(k) {
		return "", "", false
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return k, v, true
}

// UpsertEnvironment sets each key of values in an /etc/environment body:
// the first line assigning it is replaced (or kept when it already reads
// as the same value), later lines assigning it are dropped because they
// would win, and missing keys are appended in sorted order. It returns the
// new body and the keys it changed.
func UpsertEnvironment(body []byte, values map[string]string) ([]byte, []string, error) {
	rendered := map[string]string{}
	for k, v := range values {
		line, err := EnvironmentLine(k, v)
		if err != nil {
			return nil, nil, err
		}
		rendered[k] = line
	}
	var out []string
	seen := map[string]bool{}
	changed := map[string]bool{}
	text := string(body)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		k, v, ok := envLineKey(l)
		want, managed := rendered[k]
		switch {
		case !ok || !managed:
			out = append(out, l)
		case seen[k]:
			changed[k] = true // a later duplicate would override ours
		case v == values[k]:
			seen[k] = true
			out = append(out, l)
		default:
			seen[k] = true
			changed[k] = true
			out = append(out, want+"\n")
		}
	}
	keys := slices.Sorted(maps.Keys(values))
	for _, k := range keys {
		if !seen[k] {
			out = append(out, rendered[k]+"\n")
			changed[k] = true
		}
	}
	list := make([]string, 0, len(changed))
	for _, k := range keys {
		if changed[k] {
			list = append(list, k)
		}
	}
	return []byte(strings.Join(out, "")), list, nil
}

func (e Environment) plan(ctx context.Context, r host.Runner) ([]byte, Change, error) {
	var c Change
	if len(e.Values) == 0 {
		return nil, c, nil
	}
	old, _, err := host.ReadFileIfExists(ctx, r, e.path())
	if err != nil {
		return nil, c, err
	}
	body, keys, err := UpsertEnvironment(old, e.Values)
	if err != nil {
		return nil, c, err
	}
	// Keys only: values may be credentials (a proxy URL with a password).
	for _, k := range keys {
		c.actionf("set %s in %s", k, e.path())
	}
	return body, c, nil
}

// Plan implements Step.
func (e Environment) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := e.plan(ctx, r)
	return c, err
}

// Apply implements Step. The file's mode and owner stay as they are.
func (e Environment) Apply(ctx context.Context, r host.Runner) (Change, error) {
	body, c, err := e.plan(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	_, err = host.WriteFile(ctx, r, e.path(), body, 0, "")
	return c, err
}
