package hostos

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Alpine configures Alpine Linux: apk packages, OpenRC services.
type Alpine struct {
	common
	OpenRC
}

// Family implements Configurer.
func (Alpine) Family() string { return v1alpha1.FamilyAlpine }

// PackageTool implements Configurer.
func (Alpine) PackageTool(ctx context.Context, r host.Runner) (string, error) {
	return firstTool(ctx, r, "apk")
}

// PackageFile implements Configurer: an .apk is gzip-compressed tar
// segments, and .PKGINFO carries "key = value" lines.
func (Alpine) PackageFile(ctx context.Context, r host.Runner, path string) (Package, error) {
	return packageFields(ctx, r, path, `tar -xzOf "$1" .PKGINFO`, "=", "pkgname", "pkgver", "arch")
}

// apkInstalled reads the installed database: records separated by blank
// lines, P: name, V: version, A: arch. apk info -e only answers yes or no.
const apkInstalled = `[ -r "$2" ] || exit 0
awk -F: -v n="$1" '/^$/{p=""} $1=="P"{p=substr($0,3)} $1=="V"&&p==n{v=substr($0,3)} $1=="A"&&p==n{print p "|" v "|" substr($0,3)}' "$2"`

// apkDB is apk's installed database.
const apkDB = "/lib/apk/db/installed"

// Installed implements Configurer.
func (Alpine) Installed(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	return apkQuery(ctx, r, name, apkDB)
}

func apkQuery(ctx context.Context, r host.Runner, name, db string) ([]Package, error) {
	out, err := r.Sudo(ctx, host.Script(apkInstalled, name, db))
	if err != nil {
		return nil, fmt.Errorf("querying package %s: %w", name, err)
	}
	return parsePipeLines(out), nil
}

// InstallCommand implements Configurer: --no-network works on apk v2 and
// v3; the files are checked by cargoship, not by an Alpine signing key.
func (Alpine) InstallCommand(tool string, files []string) (string, error) {
	if err := checkFiles(files); err != nil {
		return "", err
	}
	if tool != "apk" {
		return "", fmt.Errorf("%w (found %q)", ErrNoPackageTool, tool)
	}
	return shell.Join(append([]string{"apk", "add", "--no-network", "--allow-untrusted"}, files...)...), nil
}

// FapolicydActive implements Configurer: Alpine does not ship fapolicyd.
func (Alpine) FapolicydActive(context.Context, host.Runner) (bool, error) { return false, nil }
