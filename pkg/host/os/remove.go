package hostos

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// packageName is what rpm, dpkg and apk accept as a package name; a name
// read back from a host that is anything else is refused before it reaches
// a command line.
var packageName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+._~-]*$`)

// checkNames refuses an empty list and anything that is not a package name.
func checkNames(names []string) error {
	if len(names) == 0 {
		return errors.New("no packages to remove")
	}
	for _, n := range names {
		if !packageName.MatchString(n) {
			return fmt.Errorf("%q is not a package name", n)
		}
	}
	return nil
}

// rpmErase removes packages with rpm itself: no repository is read, and
// rpm refuses when a package that stays needs one of them
// (docs/reference/hosts.md §2.3).
func rpmErase(names []string) (string, error) {
	if err := checkNames(names); err != nil {
		return "", err
	}
	return shell.Join(append([]string{"rpm", "-e", "--"}, names...)...), nil
}

// RemoveCommand implements Configurer.
func (EnterpriseLinux) RemoveCommand(names []string) (string, error) { return rpmErase(names) }

// RemoveCommand implements Configurer.
func (SUSE) RemoveCommand(names []string) (string, error) { return rpmErase(names) }

// RemoveCommand implements Configurer: dpkg --purge, not apt-get, which
// would remove whatever depends on the packages too; dpkg refuses instead
// (docs/reference/hosts.md §2.4).
func (Debian) RemoveCommand(names []string) (string, error) {
	if err := checkNames(names); err != nil {
		return "", err
	}
	return shell.Join(append([]string{"env", "DEBIAN_FRONTEND=noninteractive", "dpkg", "--purge", "--"}, names...)...), nil
}

// RemoveCommand implements Configurer: apk del with no network; how it
// treats a package another one needs is unconfirmed here
// (docs/reference/hosts.md §2.6).
func (Alpine) RemoveCommand(names []string) (string, error) {
	if err := checkNames(names); err != nil {
		return "", err
	}
	return shell.Join(append([]string{"apk", "del", "--no-network"}, names...)...), nil
}

// RemoveCommand implements Configurer.
func (Other) RemoveCommand([]string) (string, error) { return "", ErrNoPackageTool }
