package hostos

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// FapolicydRulesDir holds fapolicyd's component rules, compiled in
// natural sort order by fagenrules. Ours sort before 90-deny-execute, so
// an allow rule takes effect (docs/reference/hosts.md §7.1).
const FapolicydRulesDir = "/etc/fapolicyd/rules.d"

// The rule files cargoship owns: in the 80 "trusted execute" group, as
// rke2's 80-rke2.rules, after 40-bad-elf.rules so a dir= allow does not
// bypass the malformed-ELF check (docs/reference/hosts.md §7.3).
const (
	FapolicydRulesFile      = "80-cargoship.rules"
	FapolicydExecutableFile = "81-cargoship-executable.rules"
)

// LegacyFapolicydFiles are the names earlier releases wrote; an apply
// removes them, since their numbers put them before the ELF checks.
var LegacyFapolicydFiles = []string{"31-cargoship.rules", "32-cargoship-executable.rules"}

// Fapolicyd writes the distro's fapolicyd rules and, only when a file
// changed, loads them: fagenrules --load compiles and signals the daemon,
// which re-reads rules on SIGHUP only from fapolicyd 1.3, so older (or
// unknown) versions are restarted as rke2's installer does. Nothing is
// reloaded or restarted when fapolicyd is not running: restarting would
// start it, and fapolicyd denies executions.
type Fapolicyd struct {
	Configurer Configurer
	// Rules go to FapolicydRulesFile, ExecutableRules to
	// FapolicydExecutableFile; empty means the file should not exist.
	Rules           string
	ExecutableRules string
	// Trusted are executables cargoship installs (k3s, rke2, kubeadm...):
	// each gets an execute allow by path in FapolicydExecutableFile, after
	// ExecutableRules. They are not in the rpm database fapolicyd trusts,
	// so 90-deny-execute would stop them; a path rule, unlike a trust
	// database entry, survives an upgrade of the binary
	// (docs/reference/hosts.md §7.3).
	Trusted []string
	// Dir defaults to FapolicydRulesDir.
	Dir string
}

// executableRules is the content of FapolicydExecutableFile.
func (f Fapolicyd) executableRules() (string, error) {
	var b strings.Builder
	if r := normalizeRules(f.ExecutableRules); r != "" {
		b.WriteString(r)
	}
	if len(f.Trusted) > 0 {
		b.WriteString("# Executables cargoship installs\n")
	}
	for _, p := range f.Trusted {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " \t\n\r\x00") {
			return "", fmt.Errorf("fapolicyd: %q is not an absolute path without blanks", p)
		}
		fmt.Fprintf(&b, "allow perm=execute all : path=%s\n", p)
	}
	return b.String(), nil
}

func (f Fapolicyd) dir() string {
	return cmp.Or(f.Dir, FapolicydRulesDir)
}

type ruleFile struct {
	path    string
	content string // "" = remove
	exists  bool
}

// fapolicydProbe: fagenrules refuses to run while the legacy single
// fapolicyd.rules exists next to rules.d (docs/reference/hosts.md §7.1).
const fapolicydProbe = `if [ -e "$1" ]; then echo legacy=yes; else echo legacy=no; fi
if command -v fagenrules >/dev/null 2>&1; then echo fagenrules=yes; else echo fagenrules=no; fi`

func (f Fapolicyd) plan(ctx context.Context, r host.Runner) ([]ruleFile, Change, error) {
	var c Change
	var changed []ruleFile
	exec, err := f.executableRules()
	if err != nil {
		return nil, c, err
	}
	files := []ruleFile{
		{path: path.Join(f.dir(), FapolicydRulesFile), content: normalizeRules(f.Rules)},
		{path: path.Join(f.dir(), FapolicydExecutableFile), content: exec},
	}
	for _, name := range LegacyFapolicydFiles {
		files = append(files, ruleFile{path: path.Join(f.dir(), name)})
	}
	for _, rf := range files {
		old, exists, err := host.ReadFileIfExists(ctx, r, rf.path)
		if err != nil {
			return nil, c, err
		}
		rf.exists = exists
		switch {
		case rf.content == "" && exists:
			c.actionf("remove %s", rf.path)
		case rf.content != "" && (!exists || string(old) != rf.content):
			c.actionf("write %s", rf.path)
		default:
			continue
		}
		changed = append(changed, rf)
	}
	if len(changed) == 0 {
		return nil, c, nil
	}
	legacy := path.Join(path.Dir(f.dir()), "fapolicyd.rules")
	out, err := r.Sudo(ctx, host.Script(fapolicydProbe, legacy))
	if err != nil {
		return nil, c, fmt.Errorf("probing fapolicyd: %w", err)
	}
	if strings.Contains(out, "legacy=yes") {
		return nil, c, fmt.Errorf("%s exists, so fapolicyd ignores %s; move its rules into %s", legacy, f.dir(), f.dir())
	}
	if !strings.Contains(out, "fagenrules=yes") {
		return nil, c, fmt.Errorf("fagenrules is missing: this fapolicyd cannot load %s", f.dir())
	}
	return changed, c, nil
}

// Plan implements Step.
func (f Fapolicyd) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := f.plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (f Fapolicyd) Apply(ctx context.Context, r host.Runner) (Change, error) {
	changed, c, err := f.plan(ctx, r)
	if err != nil || len(changed) == 0 {
		return c, err
	}
	for _, rf := range changed {
		if rf.content == "" {
			err = host.Remove(ctx, r, rf.path)
		} else {
			_, err = host.WriteFile(ctx, r, rf.path, []byte(rf.content), 0o644, "")
		}
		if err != nil {
			return Change{}, err
		}
	}
	active, err := f.Configurer.FapolicydActive(ctx, r)
	if err != nil {
		return Change{}, err
	}
	if !active {
		c.warnf("fapolicyd is not running: the rules load when it starts")
		return c, nil
	}
	if err := loadFapolicydRules(ctx, r, f.Configurer, &c, false); err != nil {
		return Change{}, err
	}
	return c, nil
}

// loadFapolicydRules makes a running fapolicyd use rules.d as it is now:
// fagenrules --load, then a restart for daemons before 1.3, which do not
// re-read rules on the signal fagenrules sends (docs/reference/hosts.md
// §7.1). dryRun adds the actions without running them.
func loadFapolicydRules(ctx context.Context, r host.Runner, cfg Configurer, c *Change, dryRun bool) error {
	if !dryRun {
		if _, err := r.Sudo(ctx, "fagenrules --load"); err != nil {
			return fmt.Errorf("loading fapolicyd rules: %w", err)
		}
	}
	c.actionf("fagenrules --load")
	pkgs, err := cfg.Installed(ctx, r, "fapolicyd")
	if err != nil {
		return err
	}
	if len(pkgs) == 1 && reloadsRules(pkgs[0].Version) {
		return nil
	}
	if !dryRun {
		if err := cfg.Service(ctx, r, "restart", "fapolicyd"); err != nil {
			return err
		}
	}
	c.actionf("restart fapolicyd (it re-reads rules on reload only from 1.3; installed: %s)", versions(pkgs))
	return nil
}

// normalizeRules ends non-empty rules with one newline.
func normalizeRules(s string) string {
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s + "\n"
}

// reloadsRules reports whether a fapolicyd package version (rpm
// "0:1.3.2-1.el9", Debian "1.1.7-5") re-reads rules on SIGHUP: 1.3 and
// later.
func reloadsRules(version string) bool {
	if _, v, ok := strings.Cut(version, ":"); ok {
		version = v
	}
	version, _, _ = strings.Cut(version, "-")
	parts := strings.Split(version, ".")
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 1 || major == 1 && minor >= 3
}
