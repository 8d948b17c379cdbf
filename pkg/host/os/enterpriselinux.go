package hostos

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// EnterpriseLinux configures RHEL and its rebuilds, CentOS Stream, Oracle
// Linux, Fedora and Amazon Linux.
type EnterpriseLinux struct {
	common
	Systemd
}

// Family implements Configurer.
func (EnterpriseLinux) Family() string { return v1alpha1.FamilyEnterpriseLinux }

// PackageTool implements Configurer: dnf5 (Fedora 41+, whose repository
// options were renamed), dnf, yum (Amazon Linux 2), and plain rpm last.
func (EnterpriseLinux) PackageTool(ctx context.Context, r host.Runner) (string, error) {
	return firstTool(ctx, r, "dnf5", "dnf", "yum", "rpm")
}

// PackageFile implements Configurer.
func (EnterpriseLinux) PackageFile(ctx context.Context, r host.Runner, path string) (Package, error) {
	return rpmFile(ctx, r, path)
}

// Installed implements Configurer.
func (EnterpriseLinux) Installed(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	return rpmInstalled(ctx, r, name)
}

// InstallCommand implements Configurer, following docs/reference/hosts.md
// §2.7: every file of the transaction in one command, every repository
// disabled (the glob is quoted so the remote shell leaves it to dnf), weak
// dependencies off because only the uploaded files exist.
func (EnterpriseLinux) InstallCommand(tool string, files []string) (string, error) {
	if err := checkFiles(files); err != nil {
		return "", err
	}
	var args []string
	switch tool {
	case "dnf5":
		// Disabling repositories is probed first: dnf5 refuses
		// --disable-repo='*' when there are none (see dnf5Repos).
		return host.Script(dnf5Repos+`exec dnf5 "$@"`, append([]string{"-y", "--setopt=install_weak_deps=False", "install"}, files...)...), nil
	case "dnf":
		args = []string{"dnf", "-y", "--disablerepo=*", "--setopt=install_weak_deps=False", "install"}
	case "yum":
		args = []string{"yum", "-y", "--disablerepo=*", "install"}
	case "rpm":
		args = []string{"rpm", "-Uvh"}
	default:
		return "", fmt.Errorf("%w (found %q)", ErrNoPackageTool, tool)
	}
	return shell.Join(append(args, files...)...), nil
}

// FapolicydActive implements Configurer.
func (e EnterpriseLinux) FapolicydActive(ctx context.Context, r host.Runner) (bool, error) {
	return e.ServiceActive(ctx, r, "fapolicyd")
}
