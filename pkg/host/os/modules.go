package hostos

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// ModulesPath is where kernel modules are listed for loading at boot.
const ModulesPath = "/etc/modules-load.d/cargoship.conf"

// DefaultModules are the modules container networking and storage need.
var DefaultModules = []string{"br_netfilter", "overlay"}

// netfilterModule provides the net.netfilter.* sysctls: they exist only
// once nf_conntrack is loaded, so at boot systemd-sysctl (ordered after
// systemd-modules-load) can set them only when modules-load.d lists it
// (docs/reference/hosts.md §3.7).
const netfilterModule = "nf_conntrack"

// ModulesFor are the modules to load for a set of sysctl keys: the
// defaults, and nf_conntrack when a net.netfilter.* key is set.
func ModulesFor(sysctl map[string]string) []string {
	names := slices.Clone(DefaultModules)
	for k := range sysctl {
		if strings.HasPrefix(strings.ReplaceAll(k, "/", "."), "net.netfilter.") {
			return append(names, netfilterModule)
		}
	}
	return names
}

var moduleName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Modules loads kernel modules now (modprobe) and at every boot
// (modules-load.d). A module that cannot be loaded is reported in
// Change.Failed, not fatal: it may be built into the kernel, which /sys/module
// or modules.builtin shows (docs/reference/hosts.md §3.5), or the host may be
// a container without CAP_SYS_MODULE.
type Modules struct {
	// Names default to DefaultModules.
	Names []string
	// Path defaults to ModulesPath.
	Path string
}

func (m Modules) path() string {
	return cmp.Or(m.Path, ModulesPath)
}

func (m Modules) names() ([]string, error) {
	in := m.Names
	if len(in) == 0 {
		in = DefaultModules
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range in {
		if !moduleName.MatchString(n) {
			return nil, fmt.Errorf("%q is not a kernel module name", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// RenderModules is the modules-load.d file for names, in the given order.
func RenderModules(names []string) []byte {
	return []byte(generatedHeader + strings.Join(names, "\n") + "\n")
}

// moduleState prints "<name> loaded|builtin|absent" per module. A loaded
// (or built-in with parameters) module has /sys/module/<name>, with '-'
// spelled '_'; other built-ins are only in modules.builtin.
const moduleState = `for m in "$@"; do
  s=$(printf '%s' "$m" | tr - _)
  if [ -d "/sys/module/$s" ]; then echo "$m loaded"
  elif grep -Fqs -e "/$m.ko" -e "/$s.ko" "/lib/modules/$(uname -r)/modules.builtin"; then echo "$m builtin"
  else echo "$m absent"; fi
done`

func readModules(ctx context.Context, r host.Runner, names []string) (map[string]string, error) {
	out, err := r.Sudo(ctx, host.Script(moduleState, names...))
	if err != nil {
		return nil, fmt.Errorf("reading kernel modules: %w", err)
	}
	state := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if n, s, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			state[n] = s
		}
	}
	for _, n := range names {
		if state[n] == "" {
			return nil, fmt.Errorf("reading kernel modules: no answer for %s in %q", n, out)
		}
	}
	return state, nil
}

func (m Modules) plan(ctx context.Context, r host.Runner) (names, absent []string, c Change, writeFile bool, err error) {
	if names, err = m.names(); err != nil {
		return nil, nil, c, false, err
	}
	old, exists, err := host.ReadFileIfExists(ctx, r, m.path())
	if err != nil {
		return nil, nil, c, false, err
	}
	if !exists || string(old) != string(RenderModules(names)) {
		c.actionf("write %s", m.path())
		writeFile = true
	}
	state, err := readModules(ctx, r, names)
	if err != nil {
		return nil, nil, c, false, err
	}
	for _, n := range names {
		if state[n] == "absent" {
			absent = append(absent, n)
			c.actionf("load module %s", n)
		}
	}
	return names, absent, c, writeFile, nil
}

// Plan implements Step.
func (m Modules) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, _, c, _, err := m.plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (m Modules) Apply(ctx context.Context, r host.Runner) (Change, error) {
	names, absent, _, writeFile, err := m.plan(ctx, r)
	if err != nil {
		return Change{}, err
	}
	var c Change
	if writeFile {
		if _, err := host.WriteFile(ctx, r, m.path(), RenderModules(names), 0o644, ""); err != nil {
			return Change{}, err
		}
		c.actionf("write %s", m.path())
	}
	if len(absent) == 0 {
		return c, nil
	}
	msgs := map[string]string{}
	for _, n := range absent {
		if _, err := r.Sudo(ctx, host.Script(`modprobe "$1"`, n)); err != nil {
			msgs[n] = err.Error()
		}
	}
	state, err := readModules(ctx, r, absent)
	if err != nil {
		return Change{}, err
	}
	for _, n := range absent {
		if state[n] == "absent" {
			c.Failed = append(c.Failed, Failure{Item: n, Reason: "not loaded: " + msgs[n]})
			continue
		}
		c.actionf("load module %s", n)
	}
	return c, nil
}
