package hostos

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// Packages installs uploaded package files with no network, following
// docs/reference/hosts.md §2.7: read what each file carries, skip those
// already installed at exactly that version, check the rest can be
// installed offline (RPMPreflight), install them in one transaction, then
// query again rather than trusting the exit code (rpm exits
// 2 for "already installed", zypper 106/107 are partial successes).
type Packages struct {
	Configurer Configurer
	// Files are absolute paths of package files already on the host.
	Files []string
	// Keys are signing keys already on the host, imported before the
	// install (RPMPreflight).
	Keys []string
	// ResolveWith are package files installed later, by another phase:
	// the offline dependency check covers them with Files, so what the
	// whole set lacks is named before any of it is installed. Those
	// already installed at their version are left out.
	ResolveWith []string
}

// pending is a file whose package is not installed at its version.
type pending struct {
	file string
	pkg  Package
}

// Plan implements Step.
func (p Packages) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, _, c, err := p.plan(ctx, r)
	return c, err
}

func (p Packages) plan(ctx context.Context, r host.Runner) (string, []pending, Change, error) {
	var c Change
	if len(p.Files) == 0 {
		return "", nil, c, nil
	}
	tool, err := p.Configurer.PackageTool(ctx, r)
	if err != nil {
		return "", nil, c, err
	}
	if tool == "" {
		return "", nil, c, ErrNoPackageTool
	}
	var todo []pending
	for _, f := range p.Files {
		pkg, err := p.Configurer.PackageFile(ctx, r, f)
		if err != nil {
			return "", nil, c, err
		}
		ok, installed, err := p.installed(ctx, r, pkg)
		if err != nil {
			return "", nil, c, err
		}
		if ok {
			continue
		}
		todo = append(todo, pending{file: f, pkg: pkg})
		now := "not installed"
		if len(installed) > 0 {
			now = "installed: " + versions(installed)
		}
		c.actionf("install %s from %s (%s)", pkg, f, now)
	}
	return tool, todo, c, nil
}

// installed reports whether pkg is installed at its version and arch.
func (p Packages) installed(ctx context.Context, r host.Runner, pkg Package) (bool, []Package, error) {
	have, err := p.Configurer.Installed(ctx, r, pkg.Name)
	if err != nil {
		return false, nil, err
	}
	for _, h := range have {
		if h.Version == pkg.Version && (h.Arch == pkg.Arch || pkg.Arch == "") {
			return true, have, nil
		}
	}
	return false, have, nil
}

// Apply implements Step.
func (p Packages) Apply(ctx context.Context, r host.Runner) (Change, error) {
	tool, todo, c, err := p.plan(ctx, r)
	if err != nil || len(todo) == 0 {
		return c, err
	}
	files := make([]string, len(todo))
	for i, t := range todo {
		files[i] = t.file
	}
	later, err := p.pendingOf(ctx, r, p.ResolveWith)
	if err != nil {
		return Change{}, err
	}
	if err := RPMPreflight(ctx, r, p.Configurer, tool, append(files, later...), p.Keys); err != nil {
		return Change{}, err
	}
	cmd, err := p.Configurer.InstallCommand(tool, files)
	if err != nil {
		return Change{}, err
	}
	_, runErr := r.Sudo(ctx, cmd)
	var missing []string
	for _, t := range todo {
		ok, have, err := p.installed(ctx, r, t.pkg)
		if err != nil {
			return Change{}, err
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (installed: %s)", t.pkg, versions(have)))
		}
	}
	switch {
	case len(missing) > 0 && runErr != nil:
		return Change{}, fmt.Errorf("installing %s: %w; not installed: %s", strings.Join(files, " "), runErr, strings.Join(missing, ", "))
	case len(missing) > 0:
		return Change{}, fmt.Errorf("%s succeeded but left not installed: %s", tool, strings.Join(missing, ", "))
	case runErr != nil:
		c.warnf("%s reported an error, but every package is installed at its version: %v", tool, runErr)
	}
	return c, nil
}

// pendingOf are the files whose package is not installed at its version.
func (p Packages) pendingOf(ctx context.Context, r host.Runner, files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		pkg, err := p.Configurer.PackageFile(ctx, r, f)
		if err != nil {
			return nil, err
		}
		ok, _, err := p.installed(ctx, r, pkg)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func versions(ps []Package) string {
	if len(ps) == 0 {
		return "none"
	}
	v := make([]string, len(ps))
	for i, p := range ps {
		v[i] = p.Version
	}
	return strings.Join(v, ", ")
}

// packageFields runs script on the package file at path ("$1") and reads
// the package from the "key<sep>value" lines it prints, whose keys for
// name, version and architecture are given.
func packageFields(ctx context.Context, r host.Runner, path, script, sep, nameKey, versionKey, archKey string) (Package, error) {
	out, err := r.Sudo(ctx, host.Script(script, path))
	if err != nil {
		return Package{}, fmt.Errorf("reading package file %s: %w", path, err)
	}
	var p Package
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, sep)
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case nameKey:
			p.Name = v
		case versionKey:
			p.Version = v
		case archKey:
			p.Arch = v
		}
	}
	if p.Name == "" || p.Version == "" {
		return Package{}, fmt.Errorf("reading package file %s: no %s and %s in %q", path, nameKey, versionKey, out)
	}
	return p, nil
}
