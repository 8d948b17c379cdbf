package hostos

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// Configurer is what differs between OS families: how package files are
// read, queried and installed with no network, and which service manager
// runs the host. SELinux and fapolicyd probes are shared.
type Configurer interface {
	Init
	// Family is the OS family served (v1alpha1.Family*).
	Family() string
	// PackageTool names the tool InstallCommand will use on this host
	// ("dnf", "apt-get", "zypper", "apk", ...), "" when it has none.
	PackageTool(ctx context.Context, r host.Runner) (string, error)
	// PackageFile reads name, version and architecture from a package file
	// already on the host.
	PackageFile(ctx context.Context, r host.Runner, path string) (Package, error)
	// Installed lists the installed packages called name: none when it is
	// not installed, several for multilib or install-only packages.
	Installed(ctx context.Context, r host.Runner, name string) ([]Package, error)
	// InstallCommand renders the command installing files (absolute paths
	// on the host) in one transaction with every repository disabled.
	InstallCommand(tool string, files []string) (string, error)
	// RemoveCommand renders the command removing the named packages in
	// one transaction, refusing rather than removing what depends on them.
	RemoveCommand(names []string) (string, error)
	// SELinuxMode is "enforcing", "permissive" or "disabled".
	SELinuxMode(ctx context.Context, r host.Runner) (string, error)
	// FapolicydActive reports whether the fapolicyd service runs.
	FapolicydActive(ctx context.Context, r host.Runner) (bool, error)
}

// Package is a package name at a version. Version is the full version the
// package manager compares: epoch:version-release for rpm (epoch 0
// included), the Debian version, the apk version.
type Package struct {
	Name    string
	Version string
	Arch    string
}

// String is "name version (arch)".
func (p Package) String() string {
	s := p.Name + " " + p.Version
	if p.Arch != "" {
		s += " (" + p.Arch + ")"
	}
	return s
}

// ErrNoPackageTool is returned when a host has nothing that can install a
// package file (Flatcar, Fedora CoreOS, Arch).
var ErrNoPackageTool = errors.New("the host has no package tool cargoship installs files with")

// For returns the configurer for a detected OS.
func For(o OS) Configurer {
	switch o.Family {
	case v1alpha1.FamilyEnterpriseLinux:
		return EnterpriseLinux{}
	case v1alpha1.FamilyDebian:
		return Debian{}
	case v1alpha1.FamilySUSE:
		return SUSE{}
	case v1alpha1.FamilyAlpine:
		return Alpine{}
	}
	return Other{}
}

// common holds what every family shares.
type common struct{}

// selinuxScript reads selinuxfs first: it needs no package, and getenforce
// (libselinux-utils) is missing on minimal images. No selinuxfs but a
// getenforce or sestatus asks them; nothing at all means disabled
// (docs/reference/hosts.md §6.1). The same order is in the facts script.
const selinuxScript = `if [ -r /sys/fs/selinux/enforce ]; then
  if [ "$(cat /sys/fs/selinux/enforce)" = 1 ]; then echo Enforcing; else echo Permissive; fi
elif command -v getenforce >/dev/null 2>&1; then getenforce
elif command -v sestatus >/dev/null 2>&1; then sestatus | awk -F: '$1 ~ /^Current mode/ {gsub(/ /, "", $2); print $2; found=1} END {if (!found) print "Disabled"}'
else echo Disabled; fi`

// SELinuxMode implements Configurer.
func (common) SELinuxMode(ctx context.Context, r host.Runner) (string, error) {
	out, err := r.Sudo(ctx, host.Script(selinuxScript))
	if err != nil {
		return "", fmt.Errorf("reading the SELinux mode: %w", err)
	}
	switch m := strings.ToLower(strings.TrimSpace(out)); m {
	case "enforcing", "permissive", "disabled":
		return m, nil
	}
	return "", fmt.Errorf("reading the SELinux mode: the probe printed %q", out)
}

// probeTools prints the first of the tools ($@) the host has, or "none".
const probeTools = `for t in "$@"; do if command -v "$t" >/dev/null 2>&1; then echo "$t"; exit 0; fi; done; echo none`

func firstTool(ctx context.Context, r host.Runner, tools ...string) (string, error) {
	out, err := r.Sudo(ctx, host.Script(probeTools, tools...))
	if err != nil {
		return "", fmt.Errorf("looking for a package tool: %w", err)
	}
	if t := strings.TrimSpace(out); t != "none" {
		return t, nil
	}
	return "", nil
}

// checkFiles refuses relative paths: apt-get treats a name without a '/' as a
// package to download (docs/reference/hosts.md §2.4), and every family is held
// to the same rule so the phases need not know.
func checkFiles(files []string) error {
	if len(files) == 0 {
		return errors.New("no package files to install")
	}
	for _, f := range files {
		if !strings.HasPrefix(f, "/") {
			return fmt.Errorf("package file %q is not an absolute path", f)
		}
	}
	return nil
}
