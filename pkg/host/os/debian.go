package hostos

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// Debian configures Debian, Ubuntu and their derivatives.
type Debian struct {
	common
	Systemd
}

// Family implements Configurer.
func (Debian) Family() string { return v1alpha1.FamilyDebian }

// PackageTool implements Configurer. Only apt-get: dpkg -i with a missing
// dependency leaves apt broken for every later install
// (docs/reference/hosts.md §2.4).
func (Debian) PackageTool(ctx context.Context, r host.Runner) (string, error) {
	return firstTool(ctx, r, "apt-get")
}

// PackageFile implements Configurer: dpkg-deb prints "Key: value" lines.
func (Debian) PackageFile(ctx context.Context, r host.Runner, path string) (Package, error) {
	return packageFields(ctx, r, path, `dpkg-deb -f "$1" Package Version Architecture`, ":", "Package", "Version", "Architecture")
}

// dpkgFormat prints status|name|version|arch; the status is tested rather
// than the exit code, which is 0 for a removed-but-not-purged package
// (docs/reference/hosts.md §2.4).
const dpkgFormat = `${db:Status-Abbrev}|${Package}|${Version}|${Architecture}\n`

// Installed implements Configurer.
func (Debian) Installed(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	out, err := r.Sudo(ctx, host.Script(`dpkg-query -W -f="$1" -- "$2" 2>/dev/null || true`, dpkgFormat, name))
	if err != nil {
		return nil, fmt.Errorf("querying package %s: %w", name, err)
	}
	var pkgs []Package
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		// The second status letter is the current state: i = installed.
		if len(f) == 4 && len(f[0]) >= 2 && f[0][1] == 'i' && f[1] == name {
			pkgs = append(pkgs, Package{Name: f[1], Version: f[2], Arch: f[3]})
		}
	}
	return pkgs, nil
}

// AptEmptyLists is an empty package-list directory apt is pointed at, so
// it knows no repository: the given files and what is installed are all it
// can use, and nothing can send it to the network.
const AptEmptyLists = "/var/lib/cargoship/apt-lists-empty"

// InstallCommand implements Configurer: apt-get with paths (a '/' makes
// an argument a file), no sources and empty package lists so a stale list
// can never send it to the network, and the old conffile kept without a
// prompt. --no-download is not used: apt 2.6 treats a local .deb as a
// download and fails with "Pathname to install is not absolute" (seen on
// Debian 12 with no package lists). DEBIAN_FRONTEND goes through env, not
// sudo's own VAR=value, which a sudoers policy may refuse.
func (Debian) InstallCommand(tool string, files []string) (string, error) {
	if err := checkFiles(files); err != nil {
		return "", err
	}
	if tool != "apt-get" {
		return "", fmt.Errorf("%w (found %q)", ErrNoPackageTool, tool)
	}
	args := []string{AptEmptyLists,
		"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y",
		"-o", "Dir::State::Lists=" + AptEmptyLists, "-o", "Dir::Etc::SourceList=/dev/null", "-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"}
	return host.Script(`mkdir -p "$1/partial" && shift && exec "$@"`, append(args, files...)...), nil
}

// FapolicydActive implements Configurer.
func (d Debian) FapolicydActive(ctx context.Context, r host.Runner) (bool, error) {
	return d.ServiceActive(ctx, r, "fapolicyd")
}
