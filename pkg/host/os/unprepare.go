package hostos

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// generatedHeader starts every file cargoship renders whole (the sysctl.d
// and modules-load.d files); a file there without it is not left by
// cargoship, and undoing the preparation leaves it alone.
const generatedHeader = "# Written by cargoship; changes here are overwritten on the next apply.\n"

// RemoveFile removes a regular file cargoship wrote and checks it is gone:
// afterwards neither [ -e ] nor [ -L ] may find the path, else the error
// names host and path. A missing path is removed=false and no error;
// anything but a regular file (a directory, a symlink, a device) is an
// error and is left alone, since cargoship only writes regular files
// (host.WriteFile refuses anything else).
func RemoveFile(ctx context.Context, r host.Runner, p string) (removed bool, err error) {
	fi, err := host.Stat(ctx, r, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsRegular() {
		return false, fmt.Errorf("%s: %s is a %s, not a file cargoship writes: left alone", r, p, kindOf(fi))
	}
	if err := host.Remove(ctx, r, p); err != nil {
		return false, err
	}
	switch _, err := host.Stat(ctx, r, p); {
	case err == nil:
		return false, fmt.Errorf("%s: %s is still there after removing it", r, p)
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	return true, nil
}

func kindOf(fi host.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// ownFile reports whether p is a file cargoship wrote and should remove:
// a regular file, starting with header when header is not "". What is
// there but is not ours comes back as a warning.
func ownFile(ctx context.Context, r host.Runner, p, header string) (remove bool, warning string, err error) {
	fi, err := host.Stat(ctx, r, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	if !fi.IsRegular() {
		return false, fmt.Sprintf("%s is a %s, not the file cargoship writes: left alone", p, kindOf(fi)), nil
	}
	if header == "" {
		return true, "", nil
	}
	data, err := host.ReadFile(ctx, r, p)
	if err != nil {
		return false, "", err
	}
	if !bytes.HasPrefix(data, []byte(strings.TrimSuffix(header, "\n"))) {
		return false, fmt.Sprintf("%s does not start with cargoship's header: left alone", p), nil
	}
	return true, "", nil
}

// removeStep is a step removing files cargoship wrote whole.
type removeStep struct {
	paths  []string
	header string
}

func (s removeStep) plan(ctx context.Context, r host.Runner) ([]string, Change, error) {
	var c Change
	var remove []string
	for _, p := range s.paths {
		ok, warning, err := ownFile(ctx, r, p, s.header)
		if err != nil {
			return nil, c, err
		}
		if warning != "" {
			c.warnf("%s", warning)
		}
		if ok {
			remove = append(remove, p)
			c.actionf("remove %s", p)
		}
	}
	return remove, c, nil
}

func (s removeStep) apply(ctx context.Context, r host.Runner) (Change, error) {
	remove, planned, err := s.plan(ctx, r)
	if err != nil {
		return Change{}, err
	}
	c := Change{Warnings: planned.Warnings}
	for _, p := range remove {
		removed, err := RemoveFile(ctx, r, p)
		if err != nil {
			return c, err
		}
		if removed {
			c.actionf("remove %s", p)
		}
	}
	return c, nil
}

// RemoveSysctlFile removes the sysctl.d file Sysctl writes (and the names
// earlier releases wrote, when Path is unset). The values it
// set stay in the running kernel until the next boot: cargoship does not
// know what they were before.
type RemoveSysctlFile struct {
	// Path defaults to SysctlPath.
	Path string
}

func (s RemoveSysctlFile) step() removeStep {
	return removeStep{paths: append([]string{cmp.Or(s.Path, SysctlPath)}, Sysctl{Path: s.Path}.legacy().paths...), header: generatedHeader}
}

// Plan implements Step.
func (s RemoveSysctlFile) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := s.step().plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (s RemoveSysctlFile) Apply(ctx context.Context, r host.Runner) (Change, error) {
	return s.step().apply(ctx, r)
}

// RemoveModulesFile removes the modules-load.d file Modules writes. The
// modules stay loaded: other software may use br_netfilter and overlay.
type RemoveModulesFile struct {
	// Path defaults to ModulesPath.
	Path string
}

func (m RemoveModulesFile) step() removeStep {
	return removeStep{paths: []string{cmp.Or(m.Path, ModulesPath)}, header: generatedHeader}
}

// Plan implements Step.
func (m RemoveModulesFile) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := m.step().plan(ctx, r)
	return c, err
}

// Apply implements Step.
func (m RemoveModulesFile) Apply(ctx context.Context, r host.Runner) (Change, error) {
	return m.step().apply(ctx, r)
}

// RemoveHostsBlock removes cargoship's managed block from /etc/hosts and
// keeps every other byte; no file or no block changes nothing.
type RemoveHostsBlock struct {
	// Path defaults to HostsPath.
	Path string
}

func (h RemoveHostsBlock) path() string {
	return cmp.Or(h.Path, HostsPath)
}

func (h RemoveHostsBlock) plan(ctx context.Context, r host.Runner) ([]byte, Change, error) {
	var c Change
	old, exists, err := host.ReadFileIfExists(ctx, r, h.path())
	if err != nil || !exists {
		return nil, c, err
	}
	body, err := UpdateHostsFile(old, "")
	if err != nil {
		return nil, c, err
	}
	if !bytes.Equal(body, old) {
		c.actionf("remove the cargoship block from %s", h.path())
	}
	return body, c, nil
}

// Plan implements Step.
func (h RemoveHostsBlock) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, c, err := h.plan(ctx, r)
	return c, err
}

// Apply implements Step: written as EtcHosts writes (in place for a bind
// mount, docs/reference/hosts.md §4.4), then read back to check the block
// is gone.
func (h RemoveHostsBlock) Apply(ctx context.Context, r host.Runner) (Change, error) {
	body, c, err := h.plan(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	if _, err := host.WriteFile(ctx, r, h.path(), body, 0, "", host.InPlace()); err != nil {
		return Change{}, err
	}
	after, _, err := host.ReadFileIfExists(ctx, r, h.path())
	if err != nil {
		return Change{}, err
	}
	if bytes.Contains(after, []byte(HostsBegin)) {
		return Change{}, fmt.Errorf("%s: %s still holds the cargoship block after removing it", r, h.path())
	}
	return c, nil
}

// RemoveFapolicydRules removes the rule files Fapolicyd writes and, when
// one was removed and fapolicyd runs, loads the rules as Fapolicyd does
// (fagenrules --load, a restart before fapolicyd 1.3;
// docs/reference/hosts.md §7.1). A fapolicyd that does not run is not
// started. Where fagenrules is missing or the legacy fapolicyd.rules makes
// it refuse, the files are removed and the reload is left out with a
// warning.
type RemoveFapolicydRules struct {
	// Configurer tells whether fapolicyd runs, its version and how to
	// restart it; needed only when there are rule files to remove.
	Configurer Configurer
	// Dir defaults to FapolicydRulesDir.
	Dir string
}

func (f RemoveFapolicydRules) step() removeStep {
	dir := cmp.Or(f.Dir, FapolicydRulesDir)
	paths := []string{path.Join(dir, FapolicydRulesFile), path.Join(dir, FapolicydExecutableFile)}
	for _, name := range LegacyFapolicydFiles {
		paths = append(paths, path.Join(dir, name))
	}
	return removeStep{paths: paths}
}

// reload adds (dryRun) or runs the reload after a removal.
func (f RemoveFapolicydRules) reload(ctx context.Context, r host.Runner, c *Change, dryRun bool) error {
	if f.Configurer == nil {
		return errors.New("removing fapolicyd rules: no Configurer to reload fapolicyd with")
	}
	active, err := f.Configurer.FapolicydActive(ctx, r)
	if err != nil {
		return err
	}
	if !active {
		return nil
	}
	dir := cmp.Or(f.Dir, FapolicydRulesDir)
	legacy := path.Join(path.Dir(dir), "fapolicyd.rules")
	out, err := r.Sudo(ctx, host.Script(fapolicydProbe, legacy))
	if err != nil {
		return fmt.Errorf("probing fapolicyd: %w", err)
	}
	switch {
	case strings.Contains(out, "legacy=yes"):
		c.warnf("%s exists, so fapolicyd does not read %s: rules not reloaded", legacy, dir)
		return nil
	case !strings.Contains(out, "fagenrules=yes"):
		c.warnf("fagenrules is missing: fapolicyd keeps its rules until it restarts")
		return nil
	}
	if err := loadFapolicydRules(ctx, r, f.Configurer, c, dryRun); err != nil {
		return err
	}
	// fagenrules keeps the rules it replaced as compiled.rules.prev: after
	// a removal that is cargoship's rules, left beside the live ones
	// (docs/reference/hosts.md §7.1).
	prev := path.Join(path.Dir(dir), "compiled.rules.prev")
	c.actionf("rm -f %s (fagenrules' copy of the rules with cargoship's)", prev)
	if dryRun {
		return nil
	}
	if _, err := r.Sudo(ctx, host.Script(`rm -f -- "$1"`, prev)); err != nil {
		return fmt.Errorf("removing %s: %w", prev, err)
	}
	return nil
}

// Plan implements Step.
func (f RemoveFapolicydRules) Plan(ctx context.Context, r host.Runner) (Change, error) {
	remove, c, err := f.step().plan(ctx, r)
	if err != nil || len(remove) == 0 {
		return c, err
	}
	err = f.reload(ctx, r, &c, true)
	return c, err
}

// Apply implements Step.
func (f RemoveFapolicydRules) Apply(ctx context.Context, r host.Runner) (Change, error) {
	c, err := f.step().apply(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	err = f.reload(ctx, r, &c, false)
	return c, err
}

// Unprepare undoes the host preparation on a host taken out of the
// cluster: it removes cargoship's block from /etc/hosts, the sysctl.d and
// modules-load.d files and the fapolicyd rule files (then reloads
// fapolicyd's rules if it runs), in that order, and nothing else. Paths
// default to those the preparation steps use.
//
// Not undone: swap stays off (SwapOff commented the fstab entries out, and
// cargoship cannot tell those lines from ones an admin commented), SELinux
// policy modules, booleans and file contexts stay (the engine's packages
// and other software rely on them), sysctl values stay set and modules
// loaded until reboot, and /etc/environment is left as it is: Environment
// upserts KEY=VALUE lines among the admin's own with no block around them,
// so which lines cargoship wrote, and what they held before, cannot be
// told.
type Unprepare struct {
	// Configurer reloads fapolicyd; see RemoveFapolicydRules.
	Configurer Configurer
	// HostsPath, SysctlPath, ModulesPath and FapolicydDir default to
	// HostsPath, SysctlPath, ModulesPath and FapolicydRulesDir.
	HostsPath, SysctlPath, ModulesPath, FapolicydDir string
}

var (
	_ Step = Unprepare{}
	_ Step = RemoveHostsBlock{}
	_ Step = RemoveSysctlFile{}
	_ Step = RemoveModulesFile{}
	_ Step = RemoveFapolicydRules{}
	_ Step = ForgetHosts{}
)

// Steps are the removals Unprepare runs, in order.
func (u Unprepare) Steps() []Step {
	return []Step{
		RemoveHostsBlock{Path: u.HostsPath},
		RemoveSysctlFile{Path: u.SysctlPath},
		RemoveModulesFile{Path: u.ModulesPath},
		RemoveFapolicydRules{Configurer: u.Configurer, Dir: u.FapolicydDir},
	}
}

func (c *Change) merge(o Change) {
	c.Actions = append(c.Actions, o.Actions...)
	c.Failed = append(c.Failed, o.Failed...)
	c.Warnings = append(c.Warnings, o.Warnings...)
}

// Plan implements Step: every step's plan, in order.
func (u Unprepare) Plan(ctx context.Context, r host.Runner) (Change, error) {
	var c Change
	for _, s := range u.Steps() {
		sc, err := s.Plan(ctx, r)
		if err != nil {
			return c, err
		}
		c.merge(sc)
	}
	return c, nil
}

// Apply implements Step: every step in order, stopping at the first
// error, which comes back with what was done before it.
func (u Unprepare) Apply(ctx context.Context, r host.Runner) (Change, error) {
	var c Change
	for _, s := range u.Steps() {
		sc, err := s.Apply(ctx, r)
		c.merge(sc)
		if err != nil {
			return c, err
		}
	}
	return c, nil
}
