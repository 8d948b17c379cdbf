package hostos

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// SUSE configures SLES and openSUSE. Its install route is binary (see the
// package documentation); it can still install rpm files built for SUSE.
type SUSE struct {
	common
	Systemd
}

// Family implements Configurer.
func (SUSE) Family() string { return v1alpha1.FamilySUSE }

// PackageTool implements Configurer.
func (SUSE) PackageTool(ctx context.Context, r host.Runner) (string, error) {
	return firstTool(ctx, r, "zypper", "rpm")
}

// PackageFile implements Configurer.
func (SUSE) PackageFile(ctx context.Context, r host.Runner, path string) (Package, error) {
	return rpmFile(ctx, r, path)
}

// Installed implements Configurer.
func (SUSE) Installed(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	return rpmInstalled(ctx, r, name)
}

// InstallCommand implements Configurer: zypper's global options go before the
// command; --no-remote ignores every remote repository
// (docs/reference/hosts.md §2.5, the combination is unconfirmed on a real
// host). The package's own checksums were verified by cargoship, hence
// --allow-unsigned-rpm.
func (SUSE) InstallCommand(tool string, files []string) (string, error) {
	if err := checkFiles(files); err != nil {
		return "", err
	}
	var args []string
	switch tool {
	case "zypper":
		args = []string{"zypper", "-n", "--no-remote", "--no-refresh", "install", "--allow-unsigned-rpm"}
	case "rpm":
		args = []string{"rpm", "-Uvh"}
	default:
		return "", fmt.Errorf("%w (found %q)", ErrNoPackageTool, tool)
	}
	return shell.Join(append(args, files...)...), nil
}

// FapolicydActive implements Configurer.
func (s SUSE) FapolicydActive(ctx context.Context, r host.Runner) (bool, error) {
	return s.ServiceActive(ctx, r, "fapolicyd")
}
