package hostos

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// Other configures hosts cargoship installs only binaries on: Flatcar,
// Fedora CoreOS, Arch and anything it does not know. They run systemd.
type Other struct {
	common
	Systemd
}

// Family implements Configurer.
func (Other) Family() string { return v1alpha1.FamilyOther }

// PackageTool implements Configurer: none, on purpose; image-based hosts
// have a read-only package database.
func (Other) PackageTool(context.Context, host.Runner) (string, error) { return "", nil }

// PackageFile implements Configurer.
func (Other) PackageFile(_ context.Context, _ host.Runner, path string) (Package, error) {
	return Package{}, fmt.Errorf("reading %s: %w", path, ErrNoPackageTool)
}

// Installed implements Configurer: an rpm-ostree host can still answer
// from its read-only rpm database; others know of no packages.
func (Other) Installed(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	tool, err := firstTool(ctx, r, "rpm")
	if err != nil || tool == "" {
		return nil, err
	}
	return rpmInstalled(ctx, r, name)
}

// InstallCommand implements Configurer.
func (Other) InstallCommand(string, []string) (string, error) { return "", ErrNoPackageTool }

// FapolicydActive implements Configurer.
func (o Other) FapolicydActive(ctx context.Context, r host.Runner) (bool, error) {
	return o.ServiceActive(ctx, r, "fapolicyd")
}
