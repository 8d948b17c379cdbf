package hostos

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// rpmFormat prints name|epoch:version-release|arch. %{EPOCHNUM} is 0 for
// no epoch, where %{EPOCH} would print "(none)" (docs/reference/hosts.md §2.3).
const rpmFormat = `%{NAME}|%{EPOCHNUM}:%{VERSION}-%{RELEASE}|%{ARCH}\n`

// rpmFile reads a package file's identity with rpm -qp.
func rpmFile(ctx context.Context, r host.Runner, path string) (Package, error) {
	out, err := r.Sudo(ctx, host.Script(`rpm -qp --qf "$1" "$2"`, rpmFormat, path))
	if err != nil {
		return Package{}, fmt.Errorf("reading package file %s: %w", path, err)
	}
	pkgs := parsePipeLines(out)
	if len(pkgs) != 1 {
		return Package{}, fmt.Errorf("reading package file %s: rpm printed %q", path, out)
	}
	return pkgs[0], nil
}

// rpmInstalled queries the rpm database. A package that is not installed
// makes rpm exit 1 and print a sentence, which parsePipeLines skips.
func rpmInstalled(ctx context.Context, r host.Runner, name string) ([]Package, error) {
	out, err := r.Sudo(ctx, host.Script(`rpm -q --qf "$1" -- "$2" 2>/dev/null || true`, rpmFormat, name))
	if err != nil {
		return nil, fmt.Errorf("querying package %s: %w", name, err)
	}
	var pkgs []Package
	for _, p := range parsePipeLines(out) {
		if p.Name == name {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// parsePipeLines reads name|version|arch lines and skips anything else.
func parsePipeLines(out string) []Package {
	var pkgs []Package
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) == 3 && f[0] != "" && f[1] != "" {
			pkgs = append(pkgs, Package{Name: f[0], Version: f[1], Arch: f[2]})
		}
	}
	return pkgs
}
