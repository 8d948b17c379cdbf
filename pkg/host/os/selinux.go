package hostos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// SELinuxStateDir records the checksum of each policy module file
// cargoship installed, so a changed file is installed again while an
// unchanged one is not (semodule -l lists names, not contents).
const SELinuxStateDir = "/var/lib/cargoship/selinux"

// SELinuxEnabled runs Step only on hosts where SELinux is enabled, enforcing
// or permissive (phases 9 and 11), whatever the OS family: SLE Micro, SLES 16
// and Tumbleweed enforce it too, and a permissive host that is switched to
// enforcing later must already have the policy and the labels
// (docs/reference/hosts.md §6.4). A disabled host has nothing to do.
type SELinuxEnabled struct {
	Configurer Configurer
	Step       Step
}

func (e SELinuxEnabled) enabled(ctx context.Context, r host.Runner) (bool, error) {
	mode, err := e.Configurer.SELinuxMode(ctx, r)
	return err == nil && IsSELinuxEnabled(mode), err
}

// IsSELinuxEnabled says a mode (SELinuxMode's word, or the facts' word)
// means the kernel runs a policy.
func IsSELinuxEnabled(mode string) bool {
	return mode == "enforcing" || mode == "permissive"
}

// Plan implements Step.
func (e SELinuxEnabled) Plan(ctx context.Context, r host.Runner) (Change, error) {
	ok, err := e.enabled(ctx, r)
	if !ok || err != nil {
		return Change{}, err
	}
	return e.Step.Plan(ctx, r)
}

// Apply implements Step.
func (e SELinuxEnabled) Apply(ctx context.Context, r host.Runner) (Change, error) {
	ok, err := e.enabled(ctx, r)
	if !ok || err != nil {
		return Change{}, err
	}
	return e.Step.Apply(ctx, r)
}

// SELinuxModule is a policy module file already uploaded to the host.
type SELinuxModule struct {
	// Name is what semodule -l lists once it is installed.
	Name string
	Path string
	// SHA256 is the checksum Path has once uploaded: a dry run plans
	// from it, since it uploads nothing and the file is not there yet.
	SHA256 string
}

// SELinuxFileContext labels a path pattern (a regular expression, as
// semanage fcontext takes it) with a type.
type SELinuxFileContext struct {
	Path string
	Type string
}

// SELinuxPolicy installs policy modules (semodule -i), sets booleans
// persistently (only those that differ) and adds file contexts (-a, or -m
// when the spec exists with another type) in one semanage import, and
// relabels what they cover. Wrap it in SELinuxEnabled.
type SELinuxPolicy struct {
	Modules      []SELinuxModule
	Booleans     map[string]bool
	FileContexts []SELinuxFileContext
	// StateDir defaults to SELinuxStateDir.
	StateDir string
}

var (
	seName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	seType = regexp.MustCompile(`^[A-Za-z0-9_]+_t$`)
)

func (s SELinuxPolicy) stateDir() string {
	return cmp.Or(s.StateDir, SELinuxStateDir)
}

func (s SELinuxPolicy) validate() error {
	for _, m := range s.Modules {
		if !seName.MatchString(m.Name) || !strings.HasPrefix(m.Path, "/") {
			return fmt.Errorf("SELinux module %q at %q: need a module name and an absolute path", m.Name, m.Path)
		}
	}
	for b := range s.Booleans {
		if !seName.MatchString(b) {
			return fmt.Errorf("%q is not an SELinux boolean", b)
		}
	}
	for _, fc := range s.FileContexts {
		if !strings.HasPrefix(fc.Path, "/") || strings.ContainsAny(fc.Path, "\n\r\x00 \t") || !seType.MatchString(fc.Type) {
			return fmt.Errorf("SELinux file context %q -> %q: need an absolute path pattern and a type ending in _t", fc.Path, fc.Type)
		}
	}
	return nil
}

// selinuxPlan is what Apply will do.
type selinuxPlan struct {
	modules  []SELinuxModule
	sums     map[string]string // module name -> checksum of its file
	booleans []string          // name=1|0
	contexts []fcontextOp
	relabel  []string // base paths to restorecon -R
}

type fcontextOp struct {
	flag string // -a or -m
	fc   SELinuxFileContext
}

func (s SELinuxPolicy) plan(ctx context.Context, r host.Runner) (selinuxPlan, Change, error) {
	var p selinuxPlan
	var c Change
	if err := s.validate(); err != nil {
		return p, c, err
	}
	if err := s.planModules(ctx, r, &p, &c); err != nil {
		return p, c, err
	}
	if err := s.planBooleans(ctx, r, &p, &c); err != nil {
		return p, c, err
	}
	if err := s.planContexts(ctx, r, &p, &c); err != nil {
		return p, c, err
	}
	return p, c, nil
}

func (s SELinuxPolicy) planModules(ctx context.Context, r host.Runner, p *selinuxPlan, c *Change) error {
	if len(s.Modules) == 0 {
		return nil
	}
	installed, err := semoduleList(ctx, r)
	if err != nil {
		return err
	}
	p.sums = map[string]string{}
	for _, m := range s.Modules {
		sum, ok, err := host.FileSHA256(ctx, r, m.Path)
		if err != nil {
			return err
		}
		if !ok && m.SHA256 != "" {
			sum, ok = m.SHA256, true
		}
		if !ok {
			return fmt.Errorf("SELinux module %s: %s does not exist", m.Name, m.Path)
		}
		p.sums[m.Name] = sum
		rec, _, err := host.ReadFileIfExists(ctx, r, path.Join(s.stateDir(), m.Name+".sha256"))
		if err != nil {
			return err
		}
		switch {
		case !installed[m.Name]:
			c.actionf("install SELinux module %s from %s", m.Name, m.Path)
		case len(rec) > 0 && strings.TrimSpace(string(rec)) != sum:
			c.actionf("update SELinux module %s from %s (the file changed)", m.Name, m.Path)
		default:
			continue
		}
		p.modules = append(p.modules, m)
	}
	return nil
}

// semoduleList reads module names: one per line on current policycoreutils,
// "name<TAB>version" on old ones.
func semoduleList(ctx context.Context, r host.Runner) (map[string]bool, error) {
	out, err := r.Sudo(ctx, "semodule -l")
	if err != nil {
		return nil, fmt.Errorf("listing SELinux modules: %w", err)
	}
	names := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			names[f[0]] = true
		}
	}
	return names, nil
}

func (s SELinuxPolicy) planBooleans(ctx context.Context, r host.Runner, p *selinuxPlan, c *Change) error {
	if len(s.Booleans) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(s.Booleans))
	// no "--": getsebool takes it for a boolean's name and fails; the
	// names cannot start with a dash (seName)
	out, err := r.Sudo(ctx, shell.Join(append([]string{"getsebool"}, names...)...))
	if err != nil {
		return fmt.Errorf("reading SELinux booleans: %w", err)
	}
	now := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "-->"); ok {
			now[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for _, b := range names {
		want, bit := "off", "0"
		if s.Booleans[b] {
			want, bit = "on", "1"
		}
		switch now[b] {
		case want:
			continue
		case "":
			return fmt.Errorf("getsebool does not know boolean %s: %q", b, out)
		}
		p.booleans = append(p.booleans, b+"="+bit)
		c.actionf("setsebool -P %s=%s (now %s)", b, want, now[b])
	}
	return nil
}

// fcontextTypes reads `semanage fcontext -l` lines "SPEC  FTYPE  CONTEXT"
// for "all files" specs (what -a adds by default) and returns spec ->
// type; a later line wins, as local customizations do.
func fcontextTypes(out string) map[string]string {
	types := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || strings.Join(f[1:len(f)-1], " ") != "all files" {
			continue
		}
		if parts := strings.Split(f[len(f)-1], ":"); len(parts) >= 3 {
			types[f[0]] = parts[2]
		}
	}
	return types
}

func (s SELinuxPolicy) planContexts(ctx context.Context, r host.Runner, p *selinuxPlan, c *Change) error {
	if len(s.FileContexts) == 0 {
		return nil
	}
	if err := requireSemanage(ctx, r); err != nil {
		return err
	}
	out, err := r.Sudo(ctx, "semanage fcontext -l")
	if err != nil {
		return fmt.Errorf("listing SELinux file contexts: %w", err)
	}
	all := fcontextTypes(out)
	seen := map[string]bool{}
	for _, fc := range s.FileContexts {
		now, exists := all[fc.Path]
		switch {
		case now == fc.Type:
		case exists:
			p.contexts = append(p.contexts, fcontextOp{flag: "-m", fc: fc})
			c.actionf("semanage fcontext -m -t %s %s (now %s)", fc.Type, fc.Path, now)
		default:
			p.contexts = append(p.contexts, fcontextOp{flag: "-a", fc: fc})
			c.actionf("semanage fcontext -a -t %s %s", fc.Type, fc.Path)
		}
		base := FcontextBase(fc.Path)
		if base == "" || seen[base] {
			continue
		}
		seen[base] = true
		n, err := mislabeled(ctx, r, base)
		if err != nil {
			return err
		}
		if n > 0 || now != fc.Type {
			p.relabel = append(p.relabel, base)
			if n > 0 {
				c.actionf("restorecon -R %s (%d files to relabel)", base, n)
			}
		}
	}
	return nil
}

// semanageProbe answers whether semanage exists: minimal EL images leave
// out policycoreutils-python-utils, which carries it
// (docs/reference/hosts.md §6.1).
const semanageProbe = `if command -v semanage >/dev/null 2>&1; then echo semanage=yes; else echo semanage=no; fi`

// requireSemanage fails, before anything changes, on a host without
// semanage, naming the package that brings it.
func requireSemanage(ctx context.Context, r host.Runner) error {
	out, err := r.Sudo(ctx, host.Script(semanageProbe))
	if err != nil {
		return fmt.Errorf("looking for semanage: %w", err)
	}
	if !strings.Contains(out, "semanage=yes") {
		return errors.New("the distro sets SELinux file contexts but semanage is not installed: carry the policycoreutils-python-utils rpm (and its python3-policycoreutils dependency) in os.files with selector.package: rpm, or install it on the host")
	}
	return nil
}

// mislabeled counts what restorecon would change under base (0 when base
// does not exist yet: it is labelled when created).
func mislabeled(ctx context.Context, r host.Runner, base string) (int, error) {
	out, err := r.Sudo(ctx, host.Script(`[ -e "$1" ] || { echo 0; exit 0; }; restorecon -Rnv "$1" 2>/dev/null | wc -l`, base))
	if err != nil {
		return 0, fmt.Errorf("checking labels under %s: %w", base, err)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(out), &n); err != nil {
		return 0, fmt.Errorf("checking labels under %s: %q", base, out)
	}
	return n, nil
}

// FcontextBase is the path a file context pattern covers, for
// restorecon: the pattern up to its first regular-expression operator,
// cut back to a whole path component unless the operator opens a group
// of deeper components ("/var/lib/rancher(/.*)?" covers /var/lib/rancher,
// "/usr/local/s?bin/k3s" only /usr/local). A pattern matching anywhere
// gives "", so the whole file system is never relabelled.
func FcontextBase(spec string) string {
	if i := strings.IndexAny(spec, `([*?+^$|{\`); i >= 0 {
		whole := strings.HasPrefix(spec[i:], "(/")
		spec = spec[:i]
		if j := strings.LastIndex(spec, "/"); j >= 0 && !whole {
			spec = spec[:j]
		}
	}
	spec = strings.TrimRight(spec, "/")
	if spec == "" {
		return ""
	}
	return spec
}

// Plan implements Step.
func (s SELinuxPolicy) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := s.plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (s SELinuxPolicy) Apply(ctx context.Context, r host.Runner) (Change, error) {
	p, c, err := s.plan(ctx, r)
	if err != nil || !c.Changed() && len(p.relabel) == 0 {
		return c, err
	}
	if len(p.modules) > 0 {
		args := []string{"semodule"}
		for _, m := range p.modules {
			args = append(args, "-i", m.Path)
		}
		if _, err := r.Sudo(ctx, shell.Join(args...)); err != nil {
			return Change{}, fmt.Errorf("installing SELinux modules: %w", err)
		}
		installed, err := semoduleList(ctx, r)
		if err != nil {
			return Change{}, err
		}
		for _, m := range p.modules {
			if !installed[m.Name] {
				return Change{}, fmt.Errorf("semodule -i %s succeeded but semodule -l does not list %s: is Name the module's own name?", m.Path, m.Name)
			}
			if _, err := host.WriteFile(ctx, r, path.Join(s.stateDir(), m.Name+".sha256"), []byte(p.sums[m.Name]+"\n"), 0o644, ""); err != nil {
				return Change{}, err
			}
		}
	}
	if err := p.applyLocal(ctx, r); err != nil {
		return Change{}, err
	}
	for _, base := range p.relabel {
		if _, err := r.Sudo(ctx, host.Script(`[ -e "$1" ] || exit 0; restorecon -R "$1"`, base)); err != nil {
			return Change{}, fmt.Errorf("relabelling %s: %w", base, err)
		}
	}
	return c, nil
}
